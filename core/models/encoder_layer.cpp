#include "core/models/encoder_layer.h"

#include "core/models/dropout.h"

#include <ATen/ATen.h>

#include <ostream>

namespace comera {

EncoderLayerImpl::EncoderLayerImpl(const ModelConfig& config)
    : ffn_in_(config.d_model, config.ffn, config.ffn_in, config.rank_threshold),
      ffn_out_(config.ffn, config.d_model, config.ffn_out, config.rank_threshold),
      dropout_(config.dropout) {
  const auto norm = torch::nn::LayerNormOptions({config.d_model}).eps(config.layer_norm_eps);
  attention_ = register_module("attention", SelfAttention(config));
  attention_norm_ = register_module("attention_norm", torch::nn::LayerNorm(norm));
  register_module("ffn_in", ffn_in_.module());
  register_module("ffn_out", ffn_out_.module());
  ffn_norm_ = register_module("ffn_norm", torch::nn::LayerNorm(norm));
}

at::Tensor EncoderLayerImpl::forward(const at::Tensor& x, const at::Tensor& mask_bias) {
  const bool train = is_training();
  auto h = attention_norm_->forward(residual_dropout(x, attention_->forward(x, mask_bias), dropout_, train));
  auto f = ffn_out_(at::gelu(ffn_in_(h)));
  return ffn_norm_->forward(residual_dropout(h, f, dropout_, train));
}

void EncoderLayerImpl::pretty_print(std::ostream& stream) const {
  stream << "comera::EncoderLayer(dropout=" << dropout_ << ")";
}

}  // namespace comera
