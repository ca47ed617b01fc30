#include "core/models/masked_lm_head.h"

#include <ATen/ATen.h>

namespace comera {

MaskedLMHeadImpl::MaskedLMHeadImpl(const ModelConfig& config)
    : transform_(config.d_model, config.d_model, LinearSpec{}, config.rank_threshold),
      decoder_(config.d_model, config.vocab, LinearSpec{}, config.rank_threshold) {
  register_module("transform", transform_.module());
  norm_ = register_module(
      "norm", torch::nn::LayerNorm(
                  torch::nn::LayerNormOptions({config.d_model}).eps(config.layer_norm_eps)));
  register_module("decoder", decoder_.module());
}

at::Tensor MaskedLMHeadImpl::forward(const at::Tensor& hidden) {
  return decoder_(norm_->forward(at::gelu(transform_(hidden))));
}

}  // namespace comera
