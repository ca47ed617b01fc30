#pragma once
// AVX-512 float32 kernels for the skinny GEMMs of the merged path, where one side is a rank
// padded to a multiple of 16 (at most kMaxPaddedRank), and of the attention products, where it
// is the head size. OpenBLAS runs these shapes (k or n 30 to 128) far below peak;
// register-blocked broadcast-FMA loops with the narrow side held in vector registers run them
// near it.
#include <cstdint>

namespace comera::thin {

constexpr int64_t kMaxPaddedRank = 64;

// The CPU runs AVX-512F and the fast kernels are switched on (fast_kernels.h).
bool enabled();
// r rounded up to a multiple of 16.
int64_t padded(int64_t r);

// Row-major throughout, each operand with its row stride (lda, ldb, ldc).
// C (m, rp) = A (m, k) · B (k, rp).
void a_b(const float* A, int64_t lda, int64_t m, int64_t k, const float* B, int64_t ldb,
         int64_t rp, float* C, int64_t ldc);
// C (k, rp) = A (m, k)ᵀ · B (m, rp), added to C when add.
void at_b(const float* A, int64_t lda, int64_t m, int64_t k, const float* B, int64_t ldb,
          int64_t rp, float* C, int64_t ldc, bool add);
// C (m, n) = A (m, rp) · B (rp, n; row stride n) + bias (n; null for none). Here rp may be any
// multiple of 16 (a group's padded ranks side by side). stream: C is too big to stay in cache
// for its next reader, so its whole vectors are stored non-temporally (no read for ownership
// of each line); taken where C is 64-byte aligned and ldc a multiple of 16.
void a_wide(const float* A, int64_t lda, int64_t m, int64_t rp, const float* B, int64_t n,
            const float* bias, float* C, int64_t ldc, bool stream);
// s (n) += the column sums of A (m, n; row stride lda).
void col_sum_add(const float* A, int64_t lda, int64_t m, int64_t n, float* s);

}  // namespace comera::thin
