#include "core/kernels/cpu/transpose.h"

#include "core/kernels/cpu/avx512_intrinsics.h"
#include "core/kernels/cpu/cpu_features.h"

#include <c10/util/Exception.h>

#include <algorithm>

namespace comera::cpu {

namespace {

#ifdef COMERA_X86_KERNELS

constexpr int64_t kTile = 16;

__mmask16 low_bits(int64_t n) { return n >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << n) - 1); }

// r[i] holds row i of a 16 x 16 tile; afterwards r[j] holds column j. Pairs of 32-bit, then
// 64-bit elements are interleaved, then 128-bit lanes exchanged twice.
COMERA_AVX512F inline void transpose_registers(__m512 r[16]) {
  __m512 t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {
    const __m512d a = _mm512_castps_pd(t[i]), b = _mm512_castps_pd(t[i + 1]),
                  c = _mm512_castps_pd(t[i + 2]), d = _mm512_castps_pd(t[i + 3]);
    r[i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
    r[i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
    r[i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
    r[i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
  }
  for (int i = 0; i < 16; i += 8)
    for (int j = 0; j < 4; ++j) {
      t[i + j] = _mm512_shuffle_f32x4(r[i + j], r[i + j + 4], 0x88);
      t[i + j + 4] = _mm512_shuffle_f32x4(r[i + j], r[i + j + 4], 0xDD);
    }
  for (int j = 0; j < 8; ++j) {
    r[j] = _mm512_shuffle_f32x4(t[j], t[j + 8], 0x88);
    r[j + 8] = _mm512_shuffle_f32x4(t[j], t[j + 8], 0xDD);
  }
}

COMERA_AVX512F void transpose_avx512(const float* A, int64_t rows, int64_t cols, int64_t lda,
                                    float* B, int64_t ldb, int64_t padded_rows,
                                    const float* row_scale) {
  for (int64_t i0 = 0; i0 < padded_rows; i0 += kTile) {
    const int64_t valid = std::max<int64_t>(0, std::min(kTile, rows - i0));
    const __mmask16 store = low_bits(std::min(kTile, padded_rows - i0));
    for (int64_t j0 = 0; j0 < cols; j0 += kTile) {
      const int64_t width = std::min(kTile, cols - j0);
      const __mmask16 load = low_bits(width);
      __m512 r[16];
      for (int i = 0; i < 16; ++i) {
        const float* row = A + (i0 + i) * lda + j0;
        // Plain loads for whole tiles (a masked load stalls on Zen 5: avx512_intrinsics.h).
        r[i] = i >= valid ? _mm512_setzero_ps() : width == kTile ? _mm512_loadu_ps(row) : _mm512_maskz_loadu_ps(load, row);
        if (row_scale && i < valid) r[i] = _mm512_mul_ps(r[i], _mm512_set1_ps(row_scale[i0 + i]));
      }
      transpose_registers(r);
      for (int j = 0; j < width; ++j) {
        float* out = B + (j0 + j) * ldb + i0;
        if (store == 0xFFFF)
          _mm512_storeu_ps(out, r[j]);
        else
          _mm512_mask_storeu_ps(out, store, r[j]);
      }
    }
  }
}

#endif

}  // namespace

void transpose(const float* A, int64_t rows, int64_t cols, int64_t lda, float* B, int64_t ldb,
               int64_t padded_rows, const float* row_scale) {
#ifdef COMERA_X86_KERNELS
  if (cpu_has_avx512f()) return transpose_avx512(A, rows, cols, lda, B, ldb, padded_rows, row_scale);
#endif
  TORCH_CHECK(false, "transpose needs an x86-64 CPU with AVX-512; check cpu_has_avx512f()");
}

}  // namespace comera::cpu
