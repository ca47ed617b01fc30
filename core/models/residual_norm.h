#pragma once
// The post-LN step of an encoder layer, LayerNorm(x + dropout(f)) over the last dimension. On a
// CPU with AVX-512 and the fast kernels on, for float32: one autograd node whose row kernels
// (core/kernels/cpu/layer_norm_rows.h) add the branch, draw its dropout mask from the seed
// (dropout_mask.h, redrawn backward) and normalise in one pass, and give x, f, the weight and
// the bias their gradients in one pass back. Otherwise residual_dropout then ATen's layer_norm,
// with the same mask.
#include <ATen/core/Tensor.h>

namespace comera {

// x and f of one shape (..., D); weight and bias (D).
at::Tensor residual_layer_norm(const at::Tensor& x, const at::Tensor& f, double p, bool train,
                               const at::Tensor& weight, const at::Tensor& bias, double eps);

}  // namespace comera
