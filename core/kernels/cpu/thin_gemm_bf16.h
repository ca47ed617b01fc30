#pragma once
// AVX512-BF16 kernels for the merged path's batch products in a bf16 forward: the thin_gemm.h
// shapes with bf16 operands, float32 accumulation (vdpbf16ps) and bf16 or float32 results.
// oneDNN 2.6 runs these shapes at a third of its bf16 GEMM rate on an AMD EPYC, below comera's
// float32 kernels; broadcast loops with the narrow side in registers run them faster than both
// (docs/precision.md).
//
// vdpbf16ps multiplies pairs: each 32-bit lane of an operand holds two bf16 values along the
// reduction. A weight-sized operand is packed once per pass as pairs (pack_pairs); the batch
// operand of A·B supplies its pairs from its rows as they are; that of Aᵀ·B, which reduces
// over rows, from rows interleaved two by two (interleave_rows).
#include <c10/util/BFloat16.h>

#include <cstdint>

namespace comera::thin_bf16 {

using bf16 = c10::BFloat16;

// The CPU runs AVX512-BF16 (with AVX512-BW) and the fast kernels are switched on.
bool enabled();

// P = B (k, n; row stride ldb) as pairs: P[(t·n + c)·2 + e] = B[2t + e][c], t < ceil(k/2), a
// missing row of an odd k as zero. P holds ceil(k/2)·n·2 values.
void pack_pairs(const float* B, int64_t ldb, int64_t k, int64_t n, bf16* P);
// P = A (m, k; row stride lda) interleaved by row pairs, the same layout as pack_pairs.
void interleave_rows(const bf16* A, int64_t lda, int64_t m, int64_t k, bf16* P);
// P = Aᵀ (k, m) as pairs, for A (m, k; row stride lda), k and lda even: A's rows hold the pairs
// already, so P[(t·m + i)·2 + e] = A[i][2t + e] moves 32-bit words (AVX-512F tiles).
void transpose_pairs(const bf16* A, int64_t lda, int64_t m, int64_t k, bf16* P);

// C (m, rp) = A (m, k) · B (k, rp) rounded to bf16; k even, B packed (ceil(k/2) pairs of rows
// of rp), rp 16, 32, 48 or 64.
void a_b(const bf16* A, int64_t lda, int64_t m, int64_t k, const bf16* B, int64_t rp, bf16* C,
         int64_t ldc);
// C (k, rp) (+)= Aᵀ·B over `pairs` interleaved row pairs: A's pair t at A + t·2·lda (k pairs
// of values), B's at B + t·2·ldb (rp pairs); rp 16, 32, 48 or 64. float32 C, added to when add.
void at_b(const bf16* A, int64_t lda, int64_t pairs, int64_t k, const bf16* B, int64_t ldb,
          int64_t rp, float* C, int64_t ldc, bool add);
// C (m, n) = A (m, rp) · B (rp, n) + bias (n; null for none), rounded to bf16; rp a multiple of
// 16, B packed (rp/2 pairs of rows of n).
void a_wide(const bf16* A, int64_t lda, int64_t m, int64_t rp, const bf16* B, int64_t n,
            const float* bias, bf16* C, int64_t ldc);
// The same product kept in float32.
void a_wide(const bf16* A, int64_t lda, int64_t m, int64_t rp, const bf16* B, int64_t n,
            const float* bias, float* C, int64_t ldc);
// s (n) += the column sums of A (m, n; row stride lda), in float32.
void col_sum_add(const bf16* A, int64_t lda, int64_t m, int64_t n, float* s);

}  // namespace comera::thin_bf16
