#include "core/kernels/cpu/adamw_step.h"

#include "core/kernels/cpu/avx512_intrinsics.h"
#include "core/kernels/cpu/cpu_features.h"

#include <c10/util/Exception.h>

namespace comera::cpu {

bool adamw_step_available() { return cpu_has_avx512f(); }

#ifdef COMERA_X86_KERNELS

COMERA_AVX512F void adamw_step(float* p, const float* g, float* m, float* v, float* vmax, int64_t n,
                              const AdamWConstants& c) {
  const __m512 decay = _mm512_set1_ps(c.decay), b1 = _mm512_set1_ps(c.b1),
               b2 = _mm512_set1_ps(c.b2), c1 = _mm512_set1_ps(c.c1), c2 = _mm512_set1_ps(c.c2),
               eps = _mm512_set1_ps(c.eps), step = _mm512_set1_ps(c.step),
               inv_bias2 = _mm512_set1_ps(c.inv_bias2);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 k = lanes(i, n);
    const __m512 gi = _mm512_maskz_loadu_ps(k, g + i);
    const __m512 pi = _mm512_mul_ps(_mm512_maskz_loadu_ps(k, p + i), decay);
    const __m512 mi = _mm512_add_ps(_mm512_mul_ps(b1, _mm512_maskz_loadu_ps(k, m + i)), _mm512_mul_ps(c1, gi));
    __m512 vi = _mm512_add_ps(_mm512_mul_ps(b2, _mm512_maskz_loadu_ps(k, v + i)),
                              _mm512_mul_ps(_mm512_mul_ps(c2, gi), gi));
    _mm512_mask_storeu_ps(m + i, k, mi);
    _mm512_mask_storeu_ps(v + i, k, vi);
    if (vmax) {
      vi = _mm512_max_ps(_mm512_maskz_loadu_ps(k, vmax + i), vi);
      _mm512_mask_storeu_ps(vmax + i, k, vi);
    }
    const __m512 den = _mm512_add_ps(_mm512_mul_ps(_mm512_sqrt_ps(vi), inv_bias2), eps);
    _mm512_mask_storeu_ps(p + i, k, _mm512_sub_ps(pi, _mm512_div_ps(_mm512_mul_ps(step, mi), den)));
  }
}

#else

void adamw_step(float*, const float*, float*, float*, float*, int64_t, const AdamWConstants&) {
  TORCH_CHECK(false, "adamw_step needs an x86-64 CPU with AVX-512; check adamw_step_available()");
}

#endif

}  // namespace comera::cpu
