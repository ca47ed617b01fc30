#include "core/kernels/cpu/softmax_rows.h"

#include "core/kernels/cpu/cpu_features.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define COMERA_SOFTMAX_X86 1
#include "core/kernels/cpu/vector_exp.h"
#endif

namespace comera::cpu {

namespace {

template <typename T>
void softmax_row_scalar(T* row, int64_t n, const T* bias, T scale) {
  T max = -std::numeric_limits<T>::infinity();
  for (int64_t j = 0; j < n; ++j) {
    row[j] *= scale;
    if (bias) row[j] += bias[j];
    max = std::max(max, row[j]);
  }
  T sum = 0;
  for (int64_t j = 0; j < n; ++j) {
    row[j] = std::exp(row[j] - max);
    sum += row[j];
  }
  const T inv = T(1) / sum;
  for (int64_t j = 0; j < n; ++j) row[j] *= inv;
}

#ifdef COMERA_SOFTMAX_X86
COMERA_AVX512F void softmax_row_avx512(float* row, int64_t n, const float* bias, float scale) {
  const __m512 lowest = _mm512_set1_ps(-std::numeric_limits<float>::infinity()), zero = _mm512_setzero_ps();
  const __m512 by = _mm512_set1_ps(scale);
  __m512 vmax = lowest;
  for_vectors(n, [&](int64_t j, auto m) COMERA_AVX512F {
    __m512 v = _mm512_mul_ps(load_ps(row + j, m), by);
    if (bias) v = _mm512_add_ps(v, load_ps(bias + j, m));
    store_ps(row + j, m, v);
    vmax = _mm512_max_ps(vmax, where(m, v, lowest));
  });
  const __m512 max = _mm512_set1_ps(_mm512_reduce_max_ps(vmax));
  __m512 vsum = zero;
  for_vectors(n, [&](int64_t j, auto m) COMERA_AVX512F {
    const __m512 e = exp_nonpositive(_mm512_sub_ps(load_ps(row + j, m), max));
    store_ps(row + j, m, e);
    vsum = _mm512_add_ps(vsum, where(m, e, zero));
  });
  const __m512 inv = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(vsum));
  for_vectors(n, [&](int64_t j, auto m) COMERA_AVX512F {
    store_ps(row + j, m, _mm512_mul_ps(load_ps(row + j, m), inv));
  });
}
#endif

}  // namespace

template <typename T>
void softmax_rows(T* s, int64_t rows, int64_t n, int64_t ld, const T* bias, int64_t bias_ld, T scale) {
  auto bias_row = [&](int64_t r) { return bias ? bias + r * bias_ld : nullptr; };
#ifdef COMERA_SOFTMAX_X86
  if constexpr (std::is_same_v<T, float>) {
    if (cpu_has_avx512f()) {
      for (int64_t r = 0; r < rows; ++r) softmax_row_avx512(s + r * ld, n, bias_row(r), scale);
      return;
    }
  }
#endif
  for (int64_t r = 0; r < rows; ++r) softmax_row_scalar(s + r * ld, n, bias_row(r), scale);
}

namespace {

template <typename T>
void softmax_dropout_backward_scalar(const T* p, const T* d, T* g, int64_t n, T scale) {
  T acc[8] = {};  // independent partial sums, so the dot product is not one long chain
  int64_t j = 0;
  for (; j + 8 <= n; j += 8)
    for (int k = 0; k < 8; ++k) acc[k] += g[j + k] * d[j + k];
  for (; j < n; ++j) acc[0] += g[j] * d[j];
  T dot = 0;
  for (const T a : acc) dot += a;
  for (j = 0; j < n; ++j) g[j] = scale * (d[j] * g[j] - p[j] * dot);
}

#ifdef COMERA_SOFTMAX_X86
COMERA_AVX512F void softmax_dropout_backward_avx512(const float* p, const float* d, float* g,
                                                    int64_t n, float scale) {
  __m512 acc = _mm512_setzero_ps();
  for_vectors(n, [&](int64_t j, auto m) COMERA_AVX512F {
    acc = _mm512_fmadd_ps(load_ps(g + j, m), load_ps(d + j, m), acc);
  });
  const __m512 dot = _mm512_set1_ps(_mm512_reduce_add_ps(acc)), s = _mm512_set1_ps(scale);
  for_vectors(n, [&](int64_t j, auto m) COMERA_AVX512F {
    const __m512 v = _mm512_fmsub_ps(load_ps(d + j, m), load_ps(g + j, m), _mm512_mul_ps(load_ps(p + j, m), dot));
    store_ps(g + j, m, _mm512_mul_ps(v, s));
  });
}
#endif

}  // namespace

template <typename T>
void softmax_dropout_backward_rows(const T* P, const T* D, T* g, int64_t rows, int64_t n, int64_t ld,
                                   T scale) {
#ifdef COMERA_SOFTMAX_X86
  if constexpr (std::is_same_v<T, float>) {
    if (cpu_has_avx512f()) {
      for (int64_t r = 0; r < rows; ++r)
        softmax_dropout_backward_avx512(P + r * ld, D + r * ld, g + r * ld, n, scale);
      return;
    }
  }
#endif
  for (int64_t r = 0; r < rows; ++r)
    softmax_dropout_backward_scalar(P + r * ld, D + r * ld, g + r * ld, n, scale);
}

template void softmax_rows<float>(float*, int64_t, int64_t, int64_t, const float*, int64_t, float);
template void softmax_rows<double>(double*, int64_t, int64_t, int64_t, const double*, int64_t, double);
template void softmax_dropout_backward_rows<float>(const float*, const float*, float*, int64_t, int64_t,
                                                   int64_t, float);
template void softmax_dropout_backward_rows<double>(const double*, const double*, double*, int64_t,
                                                    int64_t, int64_t, double);

}  // namespace comera::cpu
