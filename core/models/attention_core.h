#pragma once
// The part of multi-head self-attention between the projections:
// dropout(softmax(scale·q k^T + bias)) v for every head, with the heads side by side in the last
// dimension as the projections give them. In the fast CPU path each (batch entry, head) pair's
// T x T block goes through its products (BLAS calls straight on that layout, the scale folded
// into them), bias, softmax and dropout while in cache, forward and backward; backward keeps
// q, k, v and the probabilities before and after dropout, not the mask. Element i of the
// (B, h, T, T) probabilities takes element i of a fresh dropout_mask.h mask.
#include <ATen/core/Tensor.h>

namespace comera {

// q, k, v: (B, T, heads·dh); scale multiplies the scores (1/sqrt(dh) in a transformer); bias
// broadcasts to (B, heads, T, T)
// (e.g. (B, 1, 1, T) padding bias) and gets no gradient. Dropout with probability p on the
// probabilities when train. Returns the context (B, T, heads·dh). On CPU (float, double) with
// the fast kernels on and BLAS found, the fused path above; bf16 q, k, v on the CPU with the
// fast kernels on: batched bf16 products with the rows in float32 between them (the probabilities
// kept in bf16); otherwise (any device or floating dtype) ATen ops under ordinary autograd,
// with the same mask.
at::Tensor attention_core(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                          const at::Tensor& bias, int64_t heads, double p, bool train, double scale);

}  // namespace comera
