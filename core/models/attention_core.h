#pragma once
// The part of multi-head self-attention between the projections: dropout(softmax(q k^T + bias))
// v for every head, with the heads side by side in the last dimension as the projections give
// them. In the fast CPU path the per-head products are strided batched GEMMs straight on that
// layout (no transposed copies of q, k, v, the context or their gradients); softmax, dropout and
// their backward are fused (one pass per row backward, which needs the probabilities before and
// after dropout but not the mask); backward keeps q, k, v and those two. Element i of the
// (B, h, T, T) probabilities takes element i of a fresh dropout_mask.h mask.
#include <ATen/core/Tensor.h>

namespace comera {

// q, k, v: (B, T, heads·dh), q already scaled by 1/sqrt(dh); bias broadcasts to (B, heads, T, T)
// (e.g. (B, 1, 1, T) padding bias) and gets no gradient. Dropout with probability p on the
// probabilities when train. Returns the context (B, T, heads·dh). On CPU (float, double) with
// the fast kernels on, the fused function above; otherwise (any device or floating dtype) ATen
// ops under ordinary autograd, with the same mask.
at::Tensor attention_core(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                          const at::Tensor& bias, int64_t heads, double p, bool train);

}  // namespace comera
