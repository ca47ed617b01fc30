#pragma once
// One post-LayerNorm transformer encoder layer (BERT): x = LN(x + Attn(x)),
// x = LN(x + FFN_out(GELU(FFN_in(x)))), with dropout on both branches.
#include "core/models/model_config.h"
#include "core/models/self_attention.h"
#include "core/models/switchable.h"

#include <torch/nn/module.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/pimpl.h>

namespace comera {

class EncoderLayerImpl : public torch::nn::Module {
 public:
  explicit EncoderLayerImpl(const ModelConfig& config);
  at::Tensor forward(const at::Tensor& x, const at::Tensor& mask_bias);
  void pretty_print(std::ostream& stream) const override;

 private:
  SelfAttention attention_{nullptr};
  torch::nn::LayerNorm attention_norm_{nullptr}, ffn_norm_{nullptr};
  LinearLayer ffn_in_, ffn_out_;
  double dropout_;
};

TORCH_MODULE(EncoderLayer);

}  // namespace comera
