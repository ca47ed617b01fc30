#pragma once
// <immintrin.h> for kernels compiled per function for AVX-512 with target attributes (the build
// targets baseline x86-64; callers check cpu_has_avx512f()).
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define COMERA_X86_KERNELS 1
// GCC 12's intrinsics pass _mm512_undefined_ps() as the unused merge source of their masked
// builtins, which -Wmaybe-uninitialized reports in every caller.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#define COMERA_AVX512F __attribute__((target("avx512f")))
#endif
