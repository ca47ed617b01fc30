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

namespace comera::cpu {

// The lanes of 16 floats from element i of a row of n: all of them, or those before its end.
inline __mmask16 lanes(int64_t i, int64_t n) {
  return n - i >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << (n - i)) - 1);
}

}  // namespace comera::cpu
#endif
