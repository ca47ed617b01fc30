#include "core/kernels/cpu/bf16_rows.h"

#include "core/kernels/cpu/avx512_intrinsics.h"
#include "core/kernels/cpu/cpu_features.h"

namespace comera::cpu {

namespace {

#ifdef COMERA_X86_KERNELS
// bf16 is the upper half of a float32's bits.
// Whole vectors only (masked 16-bit loads and stores need AVX512-BW); callers do the tail.
COMERA_AVX512F int64_t bf16_to_float_avx512(const c10::BFloat16* in, int64_t n, float scale, float* out) {
  const __m512 s = _mm512_set1_ps(scale);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i half = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i));
    const __m512 x = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(half), 16));
    _mm512_storeu_ps(out + i, _mm512_mul_ps(x, s));
  }
  return i;
}

// Round to nearest even on the bits (AVX-512F only, so CPUs without AVX512-BF16 run it too):
// add 0x7FFF plus the kept part's lowest bit, keep the upper half.
COMERA_AVX512F int64_t float_to_bf16_avx512(const float* in, int64_t n, c10::BFloat16* out) {
  const __m512i bias = _mm512_set1_epi32(0x7FFF), one = _mm512_set1_epi32(1);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512i u = _mm512_castps_si512(_mm512_loadu_ps(in + i));
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), one);
    const __m512i r = _mm512_srli_epi32(_mm512_add_epi32(u, _mm512_add_epi32(bias, lsb)), 16);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), _mm512_cvtepi32_epi16(r));
  }
  return i;
}

// One instruction per 16 where the CPU has AVX512-BF16 (1.3x the above here; NaNs stay NaN,
// denormals become zeros of their sign).
__attribute__((target("avx512f,avx512vl,avx512bf16"))) int64_t float_to_bf16_native(const float* in, int64_t n,
                                                                                 c10::BFloat16* out) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), (__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(in + i)));
  return i;
}

COMERA_AVX512_BF16 void multiply_to_bf16_native(const float* a, float* b, int64_t n, c10::BFloat16* out) {
  for_vectors(n, [&](int64_t i, auto m) COMERA_AVX512_BF16 {
    const __m512 v = _mm512_mul_ps(load_ps(a + i, m), load_ps(b + i, m));
    store_ps(b + i, m, v);
    store_bf16(out + i, m, v);
  });
}
#endif

}  // namespace

void bf16_to_float(const c10::BFloat16* in, int64_t n, float scale, float* out) {
  int64_t j = 0;
#ifdef COMERA_X86_KERNELS
  if (cpu_has_avx512f()) j = bf16_to_float_avx512(in, n, scale, out);
#endif
  for (; j < n; ++j) out[j] = scale * static_cast<float>(in[j]);
}

void multiply_to_bf16(const float* a, float* b, int64_t n, c10::BFloat16* out) {
#ifdef COMERA_X86_KERNELS
  if (cpu_has_avx512_bf16()) return multiply_to_bf16_native(a, b, n, out);
#endif
  for (int64_t j = 0; j < n; ++j) b[j] *= a[j];
  float_to_bf16(b, n, out);
}

void float_to_bf16(const float* in, int64_t n, c10::BFloat16* out) {
  int64_t j = 0;
#ifdef COMERA_X86_KERNELS
  if (cpu_has_avx512_bf16())
    j = float_to_bf16_native(in, n, out);
  else if (cpu_has_avx512f())
    j = float_to_bf16_avx512(in, n, out);
#endif
  for (; j < n; ++j) out[j] = c10::BFloat16(in[j]);
}

}  // namespace comera::cpu
