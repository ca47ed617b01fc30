#pragma once
// Dropout with a counter-based generator. ATen's CPU dropout draws every element from one
// mt19937 stream (bernoulli_), which took a quarter of a tensorized training step; here each
// 64-bit draw of SplitMix64(seed, index) gives four 16-bit uniforms, in parallel. The seed is
// drawn from the global CPU generator, so runs stay reproducible and resumable.
#include <ATen/core/Tensor.h>

namespace comera {

// x scaled by 1/(1-p) where kept, 0 where dropped (each element independently with
// probability p, resolved to 1/65536); identity when !train or p == 0.
at::Tensor fast_dropout(const at::Tensor& x, double p, bool train);

}  // namespace comera
