#include "core/kernels/cpu/layer_norm_rows.h"

#include "core/kernels/cpu/avx512_intrinsics.h"

#include <c10/util/Exception.h>

#include <cmath>

namespace comera::cpu {

#ifdef COMERA_X86_KERNELS
namespace {

COMERA_AVX512F inline __m512 load(const float* p, int64_t i, __mmask16 k) {
  return _mm512_maskz_loadu_ps(k, p + i);
}

}  // namespace

COMERA_AVX512F float layer_norm_row(const float* x, const float* f, const float* m, int64_t D,
                                    const float* w, const float* b, float eps, float* xhat,
                                    float* y) {
  // r goes to xhat first; then its mean, its variance about the mean, and the normalised row.
  __m512 sum = _mm512_setzero_ps();
  for (int64_t i = 0; i < D; i += 16) {
    const __mmask16 k = lanes(i, D);
    const __m512 fv = m ? _mm512_mul_ps(load(m, i, k), load(f, i, k)) : load(f, i, k);
    const __m512 r = _mm512_add_ps(load(x, i, k), fv);
    _mm512_mask_storeu_ps(xhat + i, k, r);
    sum = _mm512_add_ps(sum, r);
  }
  const float mean = _mm512_reduce_add_ps(sum) / static_cast<float>(D);
  const __m512 mu = _mm512_set1_ps(mean);
  __m512 squares = _mm512_setzero_ps();
  for (int64_t i = 0; i < D; i += 16) {
    const __mmask16 k = lanes(i, D);
    const __m512 c = _mm512_maskz_sub_ps(k, load(xhat, i, k), mu);
    squares = _mm512_fmadd_ps(c, c, squares);
  }
  const float rstd = 1.0f / std::sqrt(_mm512_reduce_add_ps(squares) / static_cast<float>(D) + eps);
  const __m512 s = _mm512_set1_ps(rstd);
  for (int64_t i = 0; i < D; i += 16) {
    const __mmask16 k = lanes(i, D);
    const __m512 n = _mm512_mul_ps(_mm512_sub_ps(load(xhat, i, k), mu), s);
    _mm512_mask_storeu_ps(xhat + i, k, n);
    _mm512_mask_storeu_ps(y + i, k, _mm512_fmadd_ps(n, load(w, i, k), load(b, i, k)));
  }
  return rstd;
}

COMERA_AVX512F void layer_norm_row_backward(const float* dy, const float* xhat, float rstd,
                                            const float* m, int64_t D, const float* w, float* dx,
                                            float* df, float* dw, float* db) {
  __m512 sum_g = _mm512_setzero_ps(), sum_gx = _mm512_setzero_ps();
  for (int64_t i = 0; i < D; i += 16) {
    const __mmask16 k = lanes(i, D);
    const __m512 d = load(dy, i, k), n = load(xhat, i, k);
    const __m512 g = _mm512_mul_ps(d, load(w, i, k));
    sum_g = _mm512_add_ps(sum_g, g);
    sum_gx = _mm512_fmadd_ps(g, n, sum_gx);
    _mm512_mask_storeu_ps(dw + i, k, _mm512_fmadd_ps(d, n, load(dw, i, k)));
    _mm512_mask_storeu_ps(db + i, k, _mm512_add_ps(d, load(db, i, k)));
  }
  const __m512 a = _mm512_set1_ps(_mm512_reduce_add_ps(sum_g) / static_cast<float>(D));
  const __m512 c = _mm512_set1_ps(_mm512_reduce_add_ps(sum_gx) / static_cast<float>(D));
  const __m512 s = _mm512_set1_ps(rstd);
  for (int64_t i = 0; i < D; i += 16) {
    const __mmask16 k = lanes(i, D);
    const __m512 g = _mm512_mul_ps(load(dy, i, k), load(w, i, k));
    const __m512 r = _mm512_mul_ps(s, _mm512_sub_ps(_mm512_sub_ps(g, a), _mm512_mul_ps(load(xhat, i, k), c)));
    _mm512_mask_storeu_ps(dx + i, k, r);
    _mm512_mask_storeu_ps(df + i, k, m ? _mm512_mul_ps(load(m, i, k), r) : r);
  }
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
