#pragma once
// e^z for z <= 0 on 16 floats (AVX-512F), shared by the fused softmax and GELU kernels: Cephes'
// expf (z = k ln2 + r with ln2 in two parts, a degree-6 polynomial in r, scaled by 2^k), within
// 2 ulp; exactly 0 below kExpFloor, where expf is denormal or 0. Include only on x86-64 with
// GCC or Clang; callers check cpu_has_avx512f() (cpu_features.h) before calling.
#include "core/kernels/cpu/avx512_intrinsics.h"

namespace comera::cpu {

constexpr float kExpFloor = -87.0f;

COMERA_AVX512F inline __m512 exp_nonpositive(__m512 z) {
  const __m512 k = _mm512_roundscale_ps(_mm512_mul_ps(z, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(k, _mm512_set1_ps(0.693359375f), z);
  r = _mm512_fnmadd_ps(k, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  const __m512 e = _mm512_add_ps(_mm512_fmadd_ps(p, _mm512_mul_ps(r, r), r), _mm512_set1_ps(1.0f));
  const __mmask16 live = _mm512_cmp_ps_mask(z, _mm512_set1_ps(kExpFloor), _CMP_GE_OQ);
  return _mm512_maskz_scalef_ps(live, e, k);
}

}  // namespace comera::cpu
