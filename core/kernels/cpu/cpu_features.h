#pragma once
// Whether this CPU runs AVX-512F code: the fast CPU kernels (thin GEMMs, row softmax, GELU) are
// compiled for it with target attributes and check this before calling it.

namespace comera::cpu {

inline bool cpu_has_avx512f() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  static const bool has = __builtin_cpu_supports("avx512f");
  return has;
#else
  return false;
#endif
}

}  // namespace comera::cpu
