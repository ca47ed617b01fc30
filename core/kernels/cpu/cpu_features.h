#pragma once
// Whether this CPU runs AVX-512F code: the fast CPU kernels (thin GEMMs, row softmax, GELU) are
// compiled for it with target attributes and check this (or, for bf16, the check below) before
// calling it.

namespace comera::cpu {

inline bool cpu_has_avx512f() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  static const bool has = __builtin_cpu_supports("avx512f");
  return has;
#else
  return false;
#endif
}

// Whether it also runs AVX512-BF16 with AVX512-BW and -VL (the bf16 kernels' masked 16-bit
// loads and stores).
inline bool cpu_has_avx512_bf16() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vl") &&
                          __builtin_cpu_supports("avx512bf16");
  return has;
#else
  return false;
#endif
}

}  // namespace comera::cpu
