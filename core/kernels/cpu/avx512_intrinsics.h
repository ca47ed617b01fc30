#pragma once
// <immintrin.h> for kernels compiled per function for AVX-512 with target attributes (the build
// targets baseline x86-64; callers check cpu_has_avx512f()).
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define COMERA_X86_KERNELS 1
// GCC 12's intrinsics pass _mm512_undefined_ps() (and in the _mm512_reduce_* helpers
// _mm256_undefined_pd()) as the unused merge source of their masked builtins, which
// -Wmaybe-uninitialized and -Wuninitialized report in every caller.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include <cstdint>

#define COMERA_AVX512F __attribute__((target("avx512f")))
// Masked 16-bit loads and stores need AVX512-BW, rounding to bf16 AVX512-BF16.
#define COMERA_AVX512_BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))

namespace comera::cpu {

// The lanes of 16 floats from element i of a row of n: all of them, or those before its end.
inline __mmask16 lanes(int64_t i, int64_t n) {
  return n - i >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << (n - i)) - 1);
}

// Loops over a row in vectors of 16 run whole vectors with plain loads and stores and only the
// tail masked: on an AMD Zen 5 a masked load in a long arithmetic loop made GELU 1.7x (bf16)
// to 3x (float32) slower than plain ones (docs/cpu-step.md).
struct AllLanes {};

COMERA_AVX512F inline __m512 load_ps(const float* p, AllLanes) { return _mm512_loadu_ps(p); }
COMERA_AVX512F inline __m512 load_ps(const float* p, __mmask16 m) { return _mm512_maskz_loadu_ps(m, p); }
COMERA_AVX512F inline void store_ps(float* p, AllLanes, __m512 v) { _mm512_storeu_ps(p, v); }
COMERA_AVX512F inline void store_ps(float* p, __mmask16 m, __m512 v) { _mm512_mask_storeu_ps(p, m, v); }
// 16 bf16 values (their raw 16 bits at p) widened to float32, and float32 rounded into them.
COMERA_AVX512_BF16 inline __m512 load_bf16(const void* p, AllLanes) {
  const __m256i half = _mm256_loadu_si256(static_cast<const __m256i*>(p));
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(half), 16));
}
COMERA_AVX512_BF16 inline __m512 load_bf16(const void* p, __mmask16 m) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, p)), 16));
}
COMERA_AVX512_BF16 inline void store_bf16(void* p, AllLanes, __m512 v) {
  _mm256_storeu_si256(static_cast<__m256i*>(p), (__m256i)_mm512_cvtneps_pbh(v));
}
COMERA_AVX512_BF16 inline void store_bf16(void* p, __mmask16 m, __m512 v) {
  _mm256_mask_storeu_epi16(p, m, (__m256i)_mm512_cvtneps_pbh(v));
}
// v in the lanes m holds, other in the rest (for sums and maxima over a tail).
COMERA_AVX512F inline __m512 where(AllLanes, __m512 v, __m512) { return v; }
COMERA_AVX512F inline __m512 where(__mmask16 m, __m512 v, __m512 other) { return _mm512_mask_blend_ps(m, other, v); }

// step(i, lanes) for i = 0, 16, ... < n: lanes is AllLanes{} for whole vectors, the tail's mask
// for the last, partial one. step is a generic lambda marked with its caller's target; with no
// target of its own, this inlines into any caller, and step into it.
template <typename Step>
__attribute__((always_inline)) inline void for_vectors(int64_t n, const Step& step) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) step(i, AllLanes{});
  if (i < n) step(i, lanes(i, n));
}

}  // namespace comera::cpu
#endif
