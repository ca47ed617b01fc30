#pragma once
// AVX-512 float32 kernels for the skinny GEMMs of the merged path, where one side is a rank
// padded to a multiple of 16 (at most kMaxPaddedRank). OpenBLAS runs these shapes (k or n about
// 30) far below peak; register-blocked broadcast-FMA loops with the rank side held in vector
// registers run them near it. Row-major, row strides as given.
#include <cstdint>

namespace comera::thin {

constexpr int64_t kMaxPaddedRank = 64;

// The CPU runs AVX-512F and the fast kernels are switched on (fast_kernels.h).
bool enabled();
// r rounded up to a multiple of 16.
int64_t padded(int64_t r);

// C (m, rp; row stride ldc) = A (m, k; row stride lda) · B (k, rp).
void a_b(const float* A, int64_t lda, int64_t m, int64_t k, const float* B, int64_t rp, float* C,
         int64_t ldc);
// C (k, rp) = A (m, k; row stride lda)ᵀ · B (m, rp; row stride ldb), added to C when add.
void at_b(const float* A, int64_t lda, int64_t m, int64_t k, const float* B, int64_t ldb,
          int64_t rp, float* C, bool add);
// C (m, n; row stride ldc) = A (m, rp) · B (rp, n) + bias (n; null for none). Here rp may be any
// multiple of 16 (a group's padded ranks side by side).
void a_wide(const float* A, int64_t m, int64_t rp, const float* B, int64_t n, const float* bias,
            float* C, int64_t ldc);
// s (n) += the column sums of A (m, n; row stride lda).
void col_sum_add(const float* A, int64_t lda, int64_t m, int64_t n, float* s);

}  // namespace comera::thin
