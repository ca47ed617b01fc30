#pragma once
// GELU, x·Φ(x) with Φ the standard normal CDF (the erf form, not the tanh approximation), and
// its backward, for float CPU tensors with AVX-512: Φ from Abramowitz and Stegun's erfc
// approximation 7.1.26 (absolute error under 1.5e-7, no cancellation for negative x) and one
// exp per element, which the backward's density term shares. ATen's gelu spent 13-16 ms per
// 12.6M floats on one thread here, erf-bound rather than memory-bound.
#include <ATen/core/Tensor.h>

namespace comera::cpu {

// Whether gelu() below takes x (CPU, fast kernels on, float with AVX-512 or bf16 with
// AVX512-BF16: bf16 rows are computed in float32).
bool fast_gelu_available(const at::Tensor& x);

// gelu(x) under autograd: the fused forward and a backward that recomputes Φ and φ from x.
at::Tensor gelu(const at::Tensor& x);

}  // namespace comera::cpu
