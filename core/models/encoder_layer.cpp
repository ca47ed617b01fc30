#include "core/models/encoder_layer.h"

#include "core/kernels/cpu/gelu.h"
#include "core/models/residual_norm.h"
#include "core/util/step_parts.h"

#include <ATen/ATen.h>
#include <ATen/record_function.h>

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

namespace {

// Runs `f` inside the profiler scope of `part` (free when nobody observes).
template <typename F>
at::Tensor in_part(step_parts::Part part, F f) {
  RECORD_USER_SCOPE(step_parts::scope_name(part));
  return f();
}

}  // namespace

at::Tensor EncoderLayerImpl::forward(const at::Tensor& x, const at::Tensor& mask_bias) {
  using namespace step_parts;
  const bool train = is_training();
  // LayerNorm(x + dropout(branch)) with a norm module's weight, bias and eps.
  const auto add_norm = [&](const torch::nn::LayerNorm& norm, const at::Tensor& x0, const at::Tensor& branch) {
    return in_part(kResidualNorm, [&] {
      return residual_layer_norm(x0, branch, dropout_, train, norm->weight, norm->bias, norm->options.eps());
    });
  };
  const auto h = add_norm(attention_norm_, x, attention_->forward(x, mask_bias));
  const auto u = ffn_in_(h);
  const auto f = ffn_out_(in_part(kActivation, [&] { return cpu::fast_gelu_available(u) ? cpu::gelu(u) : at::gelu(u); }));
  return add_norm(ffn_norm_, h, f);
}

void EncoderLayerImpl::pretty_print(std::ostream& stream) const {
  stream << "comera::EncoderLayer(dropout=" << dropout_ << ")";
}

}  // namespace comera
