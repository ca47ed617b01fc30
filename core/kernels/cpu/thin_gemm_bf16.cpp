#include "core/kernels/cpu/thin_gemm_bf16.h"

#include "core/kernels/cpu/avx512_intrinsics.h"
#include "core/kernels/cpu/cpu_features.h"
#include "core/kernels/cpu/thin_dispatch.h"
#include "core/kernels/cpu/transpose.h"
#include "core/kernels/fast_kernels.h"

#include <c10/util/Exception.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

namespace comera::thin_bf16 {

using thin::block_rows;
using thin::for_column_blocks;
using thin::with_flag;
using thin::with_vectors;

bool enabled() { return cpu::cpu_has_avx512_bf16() && fast_kernels_enabled(); }

void transpose_pairs(const bf16* A, int64_t lda, int64_t m, int64_t k, bf16* P) {
  TORCH_CHECK(k % 2 == 0 && lda % 2 == 0,
              "bf16 pair transpose: the row length and stride must be even, got ", k, " and ", lda);
  // A transpose of 32-bit words, which the float transpose moves bit for bit (no arithmetic
  // without a row scale).
  cpu::transpose(reinterpret_cast<const float*>(A), m, k / 2, lda / 2, reinterpret_cast<float*>(P),
                 m, m);
}

void pack_pairs(const float* B, int64_t ldb, int64_t k, int64_t n, bf16* P) {
  for (int64_t t = 0; 2 * t < k; ++t)
    for (int64_t c = 0; c < n; ++c) {
      P[(t * n + c) * 2] = bf16(B[2 * t * ldb + c]);
      P[(t * n + c) * 2 + 1] = 2 * t + 1 < k ? bf16(B[(2 * t + 1) * ldb + c]) : bf16(0.0f);
    }
}

#ifdef COMERA_X86_KERNELS
namespace {

// A pair of bf16 values as one 32-bit lane, in every lane.
COMERA_AVX512_BF16 inline __m512bh pair(const bf16* p) {
  uint32_t w;
  std::memcpy(&w, p, sizeof w);
  return (__m512bh)_mm512_set1_epi32(static_cast<int>(w));
}

COMERA_AVX512_BF16 inline __m512bh load_pairs(const bf16* p) {
  return (__m512bh)_mm512_loadu_si512(p);
}

COMERA_AVX512_BF16 inline void store(bf16* p, __m512 v) { cpu::store_bf16(p, cpu::AllLanes{}, v); }
COMERA_AVX512_BF16 inline void store(float* p, __m512 v) { _mm512_storeu_ps(p, v); }
COMERA_AVX512_BF16 inline void store(bf16* p, __mmask16 lanes, __m512 v) { cpu::store_bf16(p, lanes, v); }
COMERA_AVX512_BF16 inline void store(float* p, __mmask16 lanes, __m512 v) {
  _mm512_mask_storeu_ps(p, lanes, v);
}

// MR rows of C = A·B, NV vectors each, over k/2 pairs.
template <int NV, int MR>
COMERA_AVX512_BF16 void a_b_block(const bf16* A, int64_t lda, int64_t k, const bf16* B, bf16* C,
                                  int64_t ldc) {
  constexpr int64_t rp = 16 * NV;
  __m512 acc[MR][NV];
  for (int j = 0; j < MR; ++j)
    for (int v = 0; v < NV; ++v) acc[j][v] = _mm512_setzero_ps();
  for (int64_t t = 0; t < k / 2; ++t) {
    __m512bh b[NV];
    for (int v = 0; v < NV; ++v) b[v] = load_pairs(B + (t * rp + 16 * v) * 2);
    for (int j = 0; j < MR; ++j) {
      const __m512bh a = pair(A + j * lda + 2 * t);
      for (int v = 0; v < NV; ++v) acc[j][v] = _mm512_dpbf16_ps(acc[j][v], a, b[v]);
    }
  }
  for (int j = 0; j < MR; ++j)
    for (int v = 0; v < NV; ++v) store(C + j * ldc + 16 * v, acc[j][v]);
}

// KR rows of C (columns c of A) = Aᵀ·B over the pairs, NV vectors each.
template <int NV, int KR, bool ADD>
COMERA_AVX512_BF16 void at_b_block(const bf16* A, int64_t lda, int64_t pairs, const bf16* B,
                                   int64_t ldb, float* C, int64_t ldc) {
  __m512 acc[KR][NV];
  for (int j = 0; j < KR; ++j)
    for (int v = 0; v < NV; ++v) acc[j][v] = _mm512_setzero_ps();
  for (int64_t t = 0; t < pairs; ++t) {
    __m512bh b[NV];
    for (int v = 0; v < NV; ++v) b[v] = load_pairs(B + (t * ldb + 16 * v) * 2);
    for (int j = 0; j < KR; ++j) {
      const __m512bh a = pair(A + (t * lda + j) * 2);
      for (int v = 0; v < NV; ++v) acc[j][v] = _mm512_dpbf16_ps(acc[j][v], a, b[v]);
    }
  }
  for (int j = 0; j < KR; ++j)
    for (int v = 0; v < NV; ++v) {
      float* dst = C + j * ldc + 16 * v;
      _mm512_storeu_ps(dst, ADD ? _mm512_add_ps(_mm512_loadu_ps(dst), acc[j][v]) : acc[j][v]);
    }
}

// MR rows × NB vectors of C = A (MR, rp) · B[:, block] (+ bias); with TAIL the last vector is
// masked by `last`.
template <int MR, int NB, bool TAIL, bool BIAS, typename Out>
COMERA_AVX512_BF16 void wide_block(const bf16* A, int64_t lda, int64_t rp, const bf16* B,
                                   int64_t n, const float* bias, Out* C, int64_t ldc,
                                   __mmask16 last) {
  __m512 acc[MR][NB];
  for (int v = 0; v < NB; ++v) {
    const __m512 init = !BIAS ? _mm512_setzero_ps()
                        : TAIL && v == NB - 1 ? _mm512_maskz_loadu_ps(last, bias + 16 * v)
                                              : _mm512_loadu_ps(bias + 16 * v);
    for (int i = 0; i < MR; ++i) acc[i][v] = init;
  }
  for (int64_t p = 0; p < rp / 2; ++p) {
    __m512bh b[NB];
    for (int v = 0; v < NB; ++v) {
      const bf16* src = B + (p * n + 16 * v) * 2;
      b[v] = TAIL && v == NB - 1 ? (__m512bh)_mm512_maskz_loadu_epi32(last, src) : load_pairs(src);
    }
    for (int i = 0; i < MR; ++i) {
      const __m512bh a = pair(A + i * lda + 2 * p);
      for (int v = 0; v < NB; ++v) acc[i][v] = _mm512_dpbf16_ps(acc[i][v], a, b[v]);
    }
  }
  for (int i = 0; i < MR; ++i)
    for (int v = 0; v < NB; ++v) {
      Out* dst = C + i * ldc + 16 * v;
      if (TAIL && v == NB - 1)
        store(dst, last, acc[i][v]);
      else
        store(dst, acc[i][v]);
    }
}

using ABBlock = void (*)(const bf16*, int64_t, int64_t, const bf16*, bf16*, int64_t);
using ATBBlock = void (*)(const bf16*, int64_t, int64_t, const bf16*, int64_t, float*, int64_t);
template <typename Out>
using WideBlock = void (*)(const bf16*, int64_t, int64_t, const bf16*, int64_t, const float*, Out*,
                           int64_t, __mmask16);

// Tables of the blocks for every leftover row count 1..MR.
template <int NV, int... I>
constexpr std::array<ABBlock, sizeof...(I)> a_b_blocks(std::integer_sequence<int, I...>) {
  return {&a_b_block<NV, I + 1>...};
}
template <int NV, bool ADD, int... I>
constexpr std::array<ATBBlock, sizeof...(I)> at_b_blocks(std::integer_sequence<int, I...>) {
  return {&at_b_block<NV, I + 1, ADD>...};
}
template <int NB, bool TAIL, bool BIAS, typename Out, int... I>
constexpr std::array<WideBlock<Out>, sizeof...(I)> wide_blocks(std::integer_sequence<int, I...>) {
  return {&wide_block<I + 1, NB, TAIL, BIAS, Out>...};
}

template <int NV>
void a_b_nv(const bf16* A, int64_t lda, int64_t m, int64_t k, const bf16* B, bf16* C, int64_t ldc) {
  constexpr int MR = block_rows(NV);
  static constexpr auto blocks = a_b_blocks<NV>(std::make_integer_sequence<int, MR>{});
  for (int64_t i = 0; i < m; i += MR)
    blocks[std::min<int64_t>(MR, m - i) - 1](A + i * lda, lda, k, B, C + i * ldc, ldc);
}

template <int NV, bool ADD>
void at_b_nv(const bf16* A, int64_t lda, int64_t pairs, int64_t k, const bf16* B, int64_t ldb,
             float* C, int64_t ldc) {
  constexpr int KR = block_rows(NV);
  static constexpr auto blocks = at_b_blocks<NV, ADD>(std::make_integer_sequence<int, KR>{});
  for (int64_t c = 0; c < k; c += KR)
    blocks[std::min<int64_t>(KR, k - c) - 1](A + 2 * c, lda, pairs, B, ldb, C + c * ldc, ldc);
}

constexpr int kWideRows = 6;

template <int NB, bool TAIL, bool BIAS, typename Out>
void wide_nb(const bf16* A, int64_t lda, int64_t m, int64_t rp, const bf16* B, int64_t n,
             const float* bias, Out* C, int64_t ldc, int64_t col, __mmask16 last) {
  static constexpr auto blocks =
      wide_blocks<NB, TAIL, BIAS, Out>(std::make_integer_sequence<int, kWideRows>{});
  for (int64_t i = 0; i < m; i += kWideRows)
    blocks[std::min<int64_t>(kWideRows, m - i) - 1](A + i * lda, lda, rp, B + 2 * col, n,
                                                     BIAS ? bias + col : nullptr,
                                                     C + i * ldc + col, ldc, last);
}

template <bool BIAS, typename Out>
void wide_all(const bf16* A, int64_t lda, int64_t m, int64_t rp, const bf16* B, int64_t n,
              const float* bias, Out* C, int64_t ldc) {
  for_column_blocks(n, [&](auto nb, auto tail, int64_t col, __mmask16 last) {
    wide_nb<decltype(nb)::value, decltype(tail)::value, BIAS>(A, lda, m, rp, B, n, bias, C, ldc,
                                                             col, last);
  });
}

// 16 bf16 values, each in the low half of a 32-bit lane.
COMERA_AVX512_BF16 inline __m512i widen(const bf16* p) {
  return _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

// Whole vectors of 16 columns; the rest one value at a time.
COMERA_AVX512_BF16 void interleave_avx512(const bf16* A, int64_t lda, int64_t m, int64_t k,
                                          bf16* P) {
  for (int64_t t = 0; 2 * t < m; ++t) {
    const bf16* r0 = A + 2 * t * lda;
    const bf16* r1 = 2 * t + 1 < m ? r0 + lda : nullptr;
    bf16* out = P + t * k * 2;
    int64_t c = 0;
    for (; c + 16 <= k; c += 16) {
      const __m512i lo = widen(r0 + c);
      const __m512i hi = r1 ? _mm512_slli_epi32(widen(r1 + c), 16) : _mm512_setzero_si512();
      _mm512_storeu_si512(out + 2 * c, _mm512_or_si512(lo, hi));
    }
    for (; c < k; ++c) {
      out[2 * c] = r0[c];
      out[2 * c + 1] = r1 ? r1[c] : bf16(0.0f);
    }
  }
}

COMERA_AVX512_BF16 void col_sum_avx512(const bf16* A, int64_t lda, int64_t m, int64_t n, float* s) {
  for (int64_t i = 0; i < m; ++i) {
    const bf16* row = A + i * lda;
    cpu::for_vectors(n, [&](int64_t j, auto mask) COMERA_AVX512_BF16 {
      cpu::store_ps(s + j, mask, _mm512_add_ps(cpu::load_ps(s + j, mask), cpu::load_bf16(row + j, mask)));
    });
  }
}

}  // namespace

void interleave_rows(const bf16* A, int64_t lda, int64_t m, int64_t k, bf16* P) {
  interleave_avx512(A, lda, m, k, P);
}

void a_b(const bf16* A, int64_t lda, int64_t m, int64_t k, const bf16* B, int64_t rp, bf16* C,
         int64_t ldc) {
  TORCH_CHECK(k % 2 == 0, "bf16 thin GEMM: the reduction must be even, got ", k);
  with_vectors(rp, [&](auto nv) { a_b_nv<decltype(nv)::value>(A, lda, m, k, B, C, ldc); });
}

void at_b(const bf16* A, int64_t lda, int64_t pairs, int64_t k, const bf16* B, int64_t ldb,
          int64_t rp, float* C, int64_t ldc, bool add) {
  with_vectors(rp, [&](auto nv) {
    with_flag(add, [&](auto a) {
      at_b_nv<decltype(nv)::value, decltype(a)::value>(A, lda, pairs, k, B, ldb, C, ldc);
    });
  });
}

namespace {

template <typename Out>
void a_wide_to(const bf16* A, int64_t lda, int64_t m, int64_t rp, const bf16* B, int64_t n,
               const float* bias, Out* C, int64_t ldc) {
  TORCH_CHECK(rp > 0 && rp % 16 == 0, "bf16 thin GEMM: the inner size must be a multiple of 16, got ",
              rp);
  with_flag(bias != nullptr,
            [&](auto b) { wide_all<decltype(b)::value>(A, lda, m, rp, B, n, bias, C, ldc); });
}

}  // namespace

void a_wide(const bf16* A, int64_t lda, int64_t m, int64_t rp, const bf16* B, int64_t n,
            const float* bias, bf16* C, int64_t ldc) {
  a_wide_to(A, lda, m, rp, B, n, bias, C, ldc);
}

void a_wide(const bf16* A, int64_t lda, int64_t m, int64_t rp, const bf16* B, int64_t n,
            const float* bias, float* C, int64_t ldc) {
  a_wide_to(A, lda, m, rp, B, n, bias, C, ldc);
}

void col_sum_add(const bf16* A, int64_t lda, int64_t m, int64_t n, float* s) {
  col_sum_avx512(A, lda, m, n, s);
}

#else

namespace {
[[noreturn]] void unavailable() {
  TORCH_CHECK(false,
              "bf16 thin GEMM kernels need an x86-64 CPU with AVX512-BF16; check thin_bf16::enabled()");
}
}  // namespace

void interleave_rows(const bf16*, int64_t, int64_t, int64_t, bf16*) { unavailable(); }
void a_b(const bf16*, int64_t, int64_t, int64_t, const bf16*, int64_t, bf16*, int64_t) {
  unavailable();
}
void at_b(const bf16*, int64_t, int64_t, int64_t, const bf16*, int64_t, int64_t, float*, int64_t,
          bool) {
  unavailable();
}
void a_wide(const bf16*, int64_t, int64_t, int64_t, const bf16*, int64_t, const float*, bf16*,
            int64_t) {
  unavailable();
}
void a_wide(const bf16*, int64_t, int64_t, int64_t, const bf16*, int64_t, const float*, float*,
            int64_t) {
  unavailable();
}
void col_sum_add(const bf16*, int64_t, int64_t, int64_t, float*) { unavailable(); }

#endif

}  // namespace comera::thin_bf16
