#include "core/kernels/cpu/thin_gemm.h"

#include "core/kernels/cpu/cpu_features.h"
#include "core/kernels/cpu/thin_dispatch.h"
#include "core/kernels/fast_kernels.h"

#include <c10/util/Exception.h>

#include <array>
#include <cstdint>
#include <utility>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define COMERA_THIN_X86 1
#include "core/kernels/cpu/avx512_intrinsics.h"
#define COMERA_AVX512 __attribute__((target("avx512f,fma")))
#endif

namespace comera::thin {

bool enabled() { return cpu::cpu_has_avx512f() && fast_kernels_enabled(); }
int64_t padded(int64_t r) { return (r + 15) / 16 * 16; }

#ifdef COMERA_THIN_X86
namespace {

// MR rows of C, NV vectors each: C[j] (+)= Σ_t A[j·sj + t·st] · B[t], t < steps; rows of B and C
// ldb and ldc apart. With sj = lda, st = 1 this is A·B; with sj = 1, st = lda it is Aᵀ·B.
template <int NV, int MR, bool ADD>
COMERA_AVX512 void bcast_block(const float* A, int64_t sj, int64_t st, int64_t steps,
                               const float* B, int64_t ldb, float* C, int64_t ldc) {
  __m512 acc[MR][NV];
  for (int j = 0; j < MR; ++j)
    for (int v = 0; v < NV; ++v) acc[j][v] = _mm512_setzero_ps();
  for (int64_t t = 0; t < steps; ++t) {
    __m512 b[NV];
    for (int v = 0; v < NV; ++v) b[v] = _mm512_loadu_ps(B + t * ldb + 16 * v);
    for (int j = 0; j < MR; ++j) {
      const __m512 a = _mm512_set1_ps(A[j * sj + t * st]);
      for (int v = 0; v < NV; ++v) acc[j][v] = _mm512_fmadd_ps(a, b[v], acc[j][v]);
    }
  }
  for (int j = 0; j < MR; ++j)
    for (int v = 0; v < NV; ++v) {
      float* dst = C + j * ldc + 16 * v;
      _mm512_storeu_ps(dst, ADD ? _mm512_add_ps(_mm512_loadu_ps(dst), acc[j][v]) : acc[j][v]);
    }
}

// MR rows × NB vectors of C = A (MR, rp; row stride lda) · B[:, block] (+ bias). With TAIL the
// last vector is masked by `last`; with STREAM whole vectors are stored non-temporally (C
// aligned). (Keeping every branch compile-time lets GCC hold acc in registers.)
template <int MR, int NB, bool TAIL, bool BIAS, bool STREAM>
COMERA_AVX512 void wide_block(const float* A, int64_t lda, int64_t rp, const float* B, int64_t n,
                              const float* bias, float* C, int64_t ldc, __mmask16 last) {
  __m512 acc[MR][NB];
  for (int v = 0; v < NB; ++v) {
    const __m512 init = !BIAS ? _mm512_setzero_ps()
                        : TAIL && v == NB - 1 ? _mm512_maskz_loadu_ps(last, bias + 16 * v)
                                              : _mm512_loadu_ps(bias + 16 * v);
    for (int i = 0; i < MR; ++i) acc[i][v] = init;
  }
  for (int64_t p = 0; p < rp; ++p) {
    __m512 b[NB];
    for (int v = 0; v < NB; ++v)
      b[v] = TAIL && v == NB - 1 ? _mm512_maskz_loadu_ps(last, B + p * n + 16 * v)
                                 : _mm512_loadu_ps(B + p * n + 16 * v);
    for (int i = 0; i < MR; ++i) {
      const __m512 a = _mm512_set1_ps(A[i * lda + p]);
      for (int v = 0; v < NB; ++v) acc[i][v] = _mm512_fmadd_ps(a, b[v], acc[i][v]);
    }
  }
  for (int i = 0; i < MR; ++i)
    for (int v = 0; v < NB; ++v) {
      if (TAIL && v == NB - 1)
        _mm512_mask_storeu_ps(C + i * ldc + 16 * v, last, acc[i][v]);
      else if (STREAM)
        _mm512_stream_ps(C + i * ldc + 16 * v, acc[i][v]);
      else
        _mm512_storeu_ps(C + i * ldc + 16 * v, acc[i][v]);
    }
}

// Tables of the blocks for every leftover row count 1..MR.
using BcastBlock = void (*)(const float*, int64_t, int64_t, int64_t, const float*, int64_t, float*,
                            int64_t);
using WideBlock = void (*)(const float*, int64_t, int64_t, const float*, int64_t, const float*,
                           float*, int64_t, __mmask16);

template <int NV, bool ADD, int... I>
constexpr std::array<BcastBlock, sizeof...(I)> bcast_blocks(std::integer_sequence<int, I...>) {
  return {&bcast_block<NV, I + 1, ADD>...};
}
template <int NB, bool TAIL, bool BIAS, bool STREAM, int... I>
constexpr std::array<WideBlock, sizeof...(I)> wide_blocks(std::integer_sequence<int, I...>) {
  return {&wide_block<I + 1, NB, TAIL, BIAS, STREAM>...};
}

template <int NV>
void a_b_nv(const float* A, int64_t lda, int64_t m, int64_t k, const float* B, int64_t ldb,
            float* C, int64_t ldc) {
  constexpr int MR = block_rows(NV);
  static constexpr auto blocks = bcast_blocks<NV, false>(std::make_integer_sequence<int, MR>{});
  for (int64_t i = 0; i < m; i += MR)
    blocks[std::min<int64_t>(MR, m - i) - 1](A + i * lda, lda, 1, k, B, ldb, C + i * ldc, ldc);
}

template <int NV, bool ADD>
void at_b_nv(const float* A, int64_t lda, int64_t m, int64_t k, const float* B, int64_t ldb,
             float* C, int64_t ldc) {
  constexpr int KR = block_rows(NV);
  static constexpr auto blocks = bcast_blocks<NV, ADD>(std::make_integer_sequence<int, KR>{});
  for (int64_t c = 0; c < k; c += KR)
    blocks[std::min<int64_t>(KR, k - c) - 1](A + c, 1, lda, m, B, ldb, C + c * ldc, ldc);
}

constexpr int kWideRows = 6;

template <int NB, bool TAIL, bool BIAS, bool STREAM>
void wide_nb(const float* A, int64_t lda, int64_t m, int64_t rp, const float* B, int64_t n,
             const float* bias, float* C, int64_t ldc, int64_t col, __mmask16 last) {
  static constexpr auto blocks =
      wide_blocks<NB, TAIL, BIAS, STREAM>(std::make_integer_sequence<int, kWideRows>{});
  for (int64_t i = 0; i < m; i += kWideRows)
    blocks[std::min<int64_t>(kWideRows, m - i) - 1](A + i * lda, lda, rp, B + col, n,
                                                     BIAS ? bias + col : nullptr,
                                                     C + i * ldc + col, ldc, last);
}

template <bool BIAS, bool STREAM>
void wide_all(const float* A, int64_t lda, int64_t m, int64_t rp, const float* B, int64_t n,
              const float* bias, float* C, int64_t ldc) {
  for_column_blocks(n, [&](auto nb, auto tail, int64_t col, __mmask16 last) {
    wide_nb<decltype(nb)::value, decltype(tail)::value, BIAS, STREAM>(A, lda, m, rp, B, n, bias, C,
                                                                     ldc, col, last);
  });
}

// Row-major order (columns of a row are contiguous): strided column walks thrash the TLB.
COMERA_AVX512 void col_sum_avx512(const float* A, int64_t lda, int64_t m, int64_t n, float* s) {
  for (int64_t i = 0; i < m; ++i) {
    const float* row = A + i * lda;
    cpu::for_vectors(n, [&](int64_t j, auto lanes) COMERA_AVX512 {
      cpu::store_ps(s + j, lanes, _mm512_add_ps(cpu::load_ps(s + j, lanes), cpu::load_ps(row + j, lanes)));
    });
  }
}

void check_wide(int64_t rp) {
  TORCH_CHECK(rp > 0 && rp % 16 == 0, "thin GEMM: the inner size must be a multiple of 16, got ", rp);
}

}  // namespace

void a_b(const float* A, int64_t lda, int64_t m, int64_t k, const float* B, int64_t ldb,
         int64_t rp, float* C, int64_t ldc) {
  with_vectors(rp, [&](auto nv) { a_b_nv<decltype(nv)::value>(A, lda, m, k, B, ldb, C, ldc); });
}

void at_b(const float* A, int64_t lda, int64_t m, int64_t k, const float* B, int64_t ldb,
          int64_t rp, float* C, int64_t ldc, bool add) {
  with_vectors(rp, [&](auto nv) {
    with_flag(add, [&](auto a) {
      at_b_nv<decltype(nv)::value, decltype(a)::value>(A, lda, m, k, B, ldb, C, ldc);
    });
  });
}

void a_wide(const float* A, int64_t lda, int64_t m, int64_t rp, const float* B, int64_t n,
            const float* bias, float* C, int64_t ldc, bool stream) {
  check_wide(rp);
  stream = stream && reinterpret_cast<uintptr_t>(C) % 64 == 0 && ldc % 16 == 0;
  if (stream) {
    if (bias)
      wide_all<true, true>(A, lda, m, rp, B, n, bias, C, ldc);
    else
      wide_all<false, true>(A, lda, m, rp, B, n, bias, C, ldc);
    // Non-temporal stores are weakly ordered: fence them before another thread reads C.
    _mm_sfence();
  } else if (bias) {
    wide_all<true, false>(A, lda, m, rp, B, n, bias, C, ldc);
  } else {
    wide_all<false, false>(A, lda, m, rp, B, n, bias, C, ldc);
  }
}

void col_sum_add(const float* A, int64_t lda, int64_t m, int64_t n, float* s) {
  col_sum_avx512(A, lda, m, n, s);
}

#else

namespace {
[[noreturn]] void unavailable() {
  TORCH_CHECK(false, "thin GEMM kernels need an x86-64 CPU with AVX-512; check thin::enabled()");
}
}  // namespace

void a_b(const float*, int64_t, int64_t, int64_t, const float*, int64_t, int64_t, float*, int64_t) {
  unavailable();
}
void at_b(const float*, int64_t, int64_t, int64_t, const float*, int64_t, int64_t, float*, int64_t,
          bool) {
  unavailable();
}
void a_wide(const float*, int64_t, int64_t, int64_t, const float*, int64_t, const float*, float*,
            int64_t, bool) {
  unavailable();
}
void col_sum_add(const float*, int64_t, int64_t, int64_t, float*) { unavailable(); }

#endif

}  // namespace comera::thin
