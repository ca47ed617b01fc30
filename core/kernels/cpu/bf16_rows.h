#pragma once
// bfloat16 rows to float32 and back, for kernels that keep bf16 tensors in memory and do their
// row arithmetic in float32 (the bf16 attention core). bf16 -> float is exact; float -> bf16
// rounds to nearest even (on AVX512-BF16, denormals to zeros of their sign). AVX-512 where the
// CPU has it, else one element at a time.
#include <c10/util/BFloat16.h>

#include <cstdint>

namespace comera::cpu {

// out[j] = scale · in[j], j < n.
void bf16_to_float(const c10::BFloat16* in, int64_t n, float scale, float* out);
// out[j] = in[j] rounded to bf16, j < n.
void float_to_bf16(const float* in, int64_t n, c10::BFloat16* out);
// b[j] = a[j]·b[j] and out[j] = b[j] rounded to bf16, j < n, in one pass (a block's dropout:
// the probabilities times the mask's multipliers, kept in float32 and in bf16).
void multiply_to_bf16(const float* a, float* b, int64_t n, c10::BFloat16* out);

}  // namespace comera::cpu
