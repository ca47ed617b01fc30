#pragma once
// Multi-head self-attention with Q, K, V, O dense or TT; between the projections,
// attention_core.h (plain ATen GEMMs and softmax, so it builds on LibTorch 1.13 and 2.x alike).
#include "core/models/model_config.h"
#include "core/models/switchable.h"

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

namespace comera {

class SelfAttentionImpl : public torch::nn::Module {
 public:
  explicit SelfAttentionImpl(const ModelConfig& config);
  // x: (B, T, d_model); mask_bias: (B, 1, 1, T), 0 for real tokens and a large negative
  // value for padding (see attention_mask_bias). Returns (B, T, d_model), before the residual.
  at::Tensor forward(const at::Tensor& x, const at::Tensor& mask_bias);
  void pretty_print(std::ostream& stream) const override;

 private:
  LinearLayer query_, key_, value_, output_;
  int64_t heads_;
  double dropout_;
};

TORCH_MODULE(SelfAttention);

// (B, T) padding mask (nonzero = real token) -> additive bias (B, 1, 1, T) in `dtype`.
at::Tensor attention_mask_bias(const at::Tensor& mask, at::ScalarType dtype);

}  // namespace comera
