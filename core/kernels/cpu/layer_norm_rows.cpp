#include "core/kernels/cpu/layer_norm_rows.h"

#include "core/kernels/cpu/avx512_intrinsics.h"

#include <c10/util/Exception.h>

#include <cmath>

namespace comera::cpu {

#ifdef COMERA_X86_KERNELS

COMERA_AVX512F float layer_norm_row(const float* x, const float* f, const float* m, int64_t D,
                                    const float* w, const float* b, float eps, float* xhat,
                                    float* y) {
  // r goes to xhat first; then its mean, its variance about the mean, and the normalised row.
  const __m512 zero = _mm512_setzero_ps();
  __m512 sum = zero;
  for_vectors(D, [&](int64_t i, auto k) COMERA_AVX512F {
    const __m512 fv = m ? _mm512_mul_ps(load_ps(m + i, k), load_ps(f + i, k)) : load_ps(f + i, k);
    const __m512 r = _mm512_add_ps(load_ps(x + i, k), fv);
    store_ps(xhat + i, k, r);
    sum = _mm512_add_ps(sum, r);
  });
  const float mean = _mm512_reduce_add_ps(sum) / static_cast<float>(D);
  const __m512 mu = _mm512_set1_ps(mean);
  __m512 squares = zero;
  for_vectors(D, [&](int64_t i, auto k) COMERA_AVX512F {
    const __m512 c = where(k, _mm512_sub_ps(load_ps(xhat + i, k), mu), zero);
    squares = _mm512_fmadd_ps(c, c, squares);
  });
  const float rstd = 1.0f / std::sqrt(_mm512_reduce_add_ps(squares) / static_cast<float>(D) + eps);
  const __m512 s = _mm512_set1_ps(rstd);
  for_vectors(D, [&](int64_t i, auto k) COMERA_AVX512F {
    const __m512 n = _mm512_mul_ps(_mm512_sub_ps(load_ps(xhat + i, k), mu), s);
    store_ps(xhat + i, k, n);
    store_ps(y + i, k, _mm512_fmadd_ps(n, load_ps(w + i, k), load_ps(b + i, k)));
  });
  return rstd;
}

COMERA_AVX512F void layer_norm_row_backward(const float* dy, const float* xhat, float rstd,
                                            const float* m, int64_t D, const float* w, float* dx,
                                            float* df, float* dw, float* db) {
  __m512 sum_g = _mm512_setzero_ps(), sum_gx = _mm512_setzero_ps();
  for_vectors(D, [&](int64_t i, auto k) COMERA_AVX512F {
    const __m512 d = load_ps(dy + i, k), n = load_ps(xhat + i, k);
    const __m512 g = _mm512_mul_ps(d, load_ps(w + i, k));
    sum_g = _mm512_add_ps(sum_g, g);
    sum_gx = _mm512_fmadd_ps(g, n, sum_gx);
    store_ps(dw + i, k, _mm512_fmadd_ps(d, n, load_ps(dw + i, k)));
    store_ps(db + i, k, _mm512_add_ps(d, load_ps(db + i, k)));
  });
  const __m512 a = _mm512_set1_ps(_mm512_reduce_add_ps(sum_g) / static_cast<float>(D));
  const __m512 c = _mm512_set1_ps(_mm512_reduce_add_ps(sum_gx) / static_cast<float>(D));
  const __m512 s = _mm512_set1_ps(rstd);
  for_vectors(D, [&](int64_t i, auto k) COMERA_AVX512F {
    const __m512 g = _mm512_mul_ps(load_ps(dy + i, k), load_ps(w + i, k));
    const __m512 r = _mm512_mul_ps(s, _mm512_sub_ps(_mm512_sub_ps(g, a), _mm512_mul_ps(load_ps(xhat + i, k), c)));
    store_ps(dx + i, k, r);
    store_ps(df + i, k, m ? _mm512_mul_ps(load_ps(m + i, k), r) : r);
  });
}

#else

float layer_norm_row(const float*, const float*, const float*, int64_t, const float*, const float*,
                     float, float*, float*) {
  TORCH_CHECK(false, "layer_norm_row needs an x86-64 CPU with AVX-512");
}

void layer_norm_row_backward(const float*, const float*, float, const float*, int64_t,
                             const float*, float*, float*, float*, float*) {
  TORCH_CHECK(false, "layer_norm_row_backward needs an x86-64 CPU with AVX-512");
}

#endif

}  // namespace comera::cpu
