#pragma once
// Cross-entropy of a linear output over a whole vocabulary, logits = h · tableᵀ + bias, without
// a vocabulary-sized tensor per row kept for backward. The masked-LM decoder (tied to a 30k-word
// table) would otherwise keep its (rows, vocab) logits, their log-softmax and gradient alive:
// at d_model 64 those dwarf everything else the step holds.
//
// Fast path (the fast kernels on, core/kernels/fast_kernels.h): the rows go through in chunks
// whose logits stay under `chunk_elements`; each chunk's softmax gives its loss and, when a
// gradient is wanted, its share of the gradients of h, table and bias at once; only those
// gradients (the sizes of h, table and bias) are kept for backward, which scales them by the
// incoming gradient. Any device and floating dtype; float32 in a bf16 forward. Composite path
// (switch off): the full logits and at::cross_entropy_loss, with ordinary autograd: the
// reference it is tested against.
#include <ATen/core/Tensor.h>

#include <cstdint>

namespace comera {

struct VocabLoss {
  at::Tensor loss;     // mean cross-entropy over the rows (scalar, differentiable)
  at::Tensor correct;  // rows whose largest logit is the target (scalar int64)
};

// h: (N, d), table: (V, d), bias: (V), targets: (N) int64 in [0, V), N >= 1.
VocabLoss chunked_cross_entropy(const at::Tensor& h, const at::Tensor& table, const at::Tensor& bias,
                                const at::Tensor& targets, int64_t chunk_elements = int64_t{1} << 22);

}  // namespace comera
