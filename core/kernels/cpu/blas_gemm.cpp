#include "core/kernels/cpu/blas_gemm.h"

#include <c10/util/Exception.h>

#include <dlfcn.h>

#include <type_traits>

namespace comera::cpu {

namespace {

template <typename T>
using Gemm = void (*)(const char*, const char*, const int*, const int*, const int*, const T*,
                      const T*, const int*, const T*, const int*, const T*, T*, const int*);

template <typename T>
Gemm<T> blas() {
  static const auto gemm =
      reinterpret_cast<Gemm<T>>(dlsym(RTLD_DEFAULT, std::is_same_v<T, float> ? "sgemm_" : "dgemm_"));
  return gemm;
}

}  // namespace

template <typename T>
bool has_blas_gemm() {
  return blas<T>() != nullptr;
}

template <typename T>
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* A, int64_t lda,
          const T* B, int64_t ldb, T beta, T* C, int64_t ldc) {
  if (m == 0 || n == 0) return;
  const auto f = blas<T>();
  TORCH_INTERNAL_ASSERT(f, "no BLAS gemm was found");
  // Column-major BLAS computes Cᵀ = op(B)ᵀ·op(A)ᵀ on the same buffers.
  const char a = ta ? 'T' : 'N', b = tb ? 'T' : 'N';
  const int M = static_cast<int>(m), N = static_cast<int>(n), K = static_cast<int>(k),
            LDA = static_cast<int>(lda), LDB = static_cast<int>(ldb), LDC = static_cast<int>(ldc);
  f(&b, &a, &N, &M, &K, &alpha, B, &LDB, A, &LDA, &beta, C, &LDC);
}

template bool has_blas_gemm<float>();
template bool has_blas_gemm<double>();
template void gemm<float>(bool, bool, int64_t, int64_t, int64_t, float, const float*, int64_t,
                          const float*, int64_t, float, float*, int64_t);
template void gemm<double>(bool, bool, int64_t, int64_t, int64_t, double, const double*, int64_t,
                           const double*, int64_t, double, double*, int64_t);

}  // namespace comera::cpu
