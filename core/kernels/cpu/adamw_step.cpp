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
  for_vectors(n, [&](int64_t i, auto k) COMERA_AVX512F {
    const __m512 gi = load_ps(g + i, k);
    const __m512 pi = _mm512_mul_ps(load_ps(p + i, k), decay);
    const __m512 mi = _mm512_add_ps(_mm512_mul_ps(b1, load_ps(m + i, k)), _mm512_mul_ps(c1, gi));
    __m512 vi = _mm512_add_ps(_mm512_mul_ps(b2, load_ps(v + i, k)), _mm512_mul_ps(_mm512_mul_ps(c2, gi), gi));
    store_ps(m + i, k, mi);
    store_ps(v + i, k, vi);
    if (vmax) {
      vi = _mm512_max_ps(load_ps(vmax + i, k), vi);
      store_ps(vmax + i, k, vi);
    }
    const __m512 den = _mm512_add_ps(_mm512_mul_ps(_mm512_sqrt_ps(vi), inv_bias2), eps);
    store_ps(p + i, k, _mm512_sub_ps(pi, _mm512_div_ps(_mm512_mul_ps(step, mi), den)));
  });
}

#else

void adamw_step(float*, const float*, float*, float*, float*, int64_t, const AdamWConstants&) {
  TORCH_CHECK(false, "adamw_step needs an x86-64 CPU with AVX-512; check adamw_step_available()");
}

#endif

}  // namespace comera::cpu
