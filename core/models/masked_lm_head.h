#pragma once
// Masked-LM head (BERT): transform d×d -> GELU -> LayerNorm -> decoder to the vocabulary.
// Dense: a TT decoder would need a vocabulary that factors, which BERT's 30,522 does not.
#include "core/models/model_config.h"
#include "core/models/switchable.h"

#include <torch/nn/module.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/pimpl.h>

namespace comera {

class MaskedLMHeadImpl : public torch::nn::Module {
 public:
  explicit MaskedLMHeadImpl(const ModelConfig& config);
  // hidden: (..., d_model) -> (..., vocab) logits.
  at::Tensor forward(const at::Tensor& hidden);

 private:
  LinearLayer transform_, decoder_;
  torch::nn::LayerNorm norm_{nullptr};
};

TORCH_MODULE(MaskedLMHead);

}  // namespace comera
