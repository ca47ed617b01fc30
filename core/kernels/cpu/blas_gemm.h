#pragma once
// The Fortran gemm of the BLAS LibTorch was linked with, looked up at run time (comera does not
// link BLAS itself), on row-major operands. Inside an OpenMP parallel region OpenBLAS runs it on
// the calling thread, so callers split independent products across threads themselves.
#include <cstdint>

namespace comera::cpu {

// sgemm_ (float) or dgemm_ (double) was found.
template <typename T>
bool has_blas_gemm();

// Row-major C (m x n, row stride ldc) = alpha·op(A)·op(B) + beta·C, op(A) m x k and op(B) k x n;
// ta / tb: A or B is stored transposed. Needs has_blas_gemm<T>().
template <typename T>
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* A, int64_t lda,
          const T* B, int64_t ldb, T beta, T* C, int64_t ldc);

}  // namespace comera::cpu
