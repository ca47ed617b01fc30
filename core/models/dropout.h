#pragma once
// Dropout (each element dropped with probability p, the rest scaled by 1/(1-p)) on the
// counter-based mask of dropout_mask.h. On CPU (float, double) with the fast kernels on, autograd
// functions that save the mask's seed rather than a mask tensor: one pass forward, one pass
// backward. Otherwise (any device or floating dtype) ATen ops multiply by the same mask, made on
// the tensor's device, under ordinary autograd. Both are the identity map when !train or p == 0.
#include <ATen/core/Tensor.h>

namespace comera {

// Dropout of x.
at::Tensor fast_dropout(const at::Tensor& x, double p, bool train);

// x + dropout(f) in one pass (x and f of one shape): the residual branch of a post-LN layer.
at::Tensor residual_dropout(const at::Tensor& x, const at::Tensor& f, double p, bool train);

}  // namespace comera
