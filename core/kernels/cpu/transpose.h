#pragma once
// Out-of-place float transpose in 16 x 16 tiles held in AVX-512 registers: a plain double loop
// walks one side with a stride, and the merged path's kernels need several (out or in) x r
// transposes per layer and step. Needs an AVX-512F CPU (cpu_has_avx512f(), as the thin kernels).
#include <cstdint>

namespace comera::cpu {

// B[j·ldb + i] = s_i·A[i·lda + j] for i < rows, j < cols, s_i = row_scale[i] (1 when null), and
// B[j·ldb + i] = 0 for rows <= i < padded_rows (padded_rows >= rows).
void transpose(const float* A, int64_t rows, int64_t cols, int64_t lda, float* B, int64_t ldb,
               int64_t padded_rows, const float* row_scale = nullptr);

}  // namespace comera::cpu
