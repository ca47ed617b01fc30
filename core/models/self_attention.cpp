#include "core/models/self_attention.h"

#include "core/models/attention_core.h"

#include <ATen/ATen.h>

#include <cmath>
#include <ostream>

namespace comera {

SelfAttentionImpl::SelfAttentionImpl(const ModelConfig& config)
    : query_(config.d_model, config.d_model, config.attention, config.rank_threshold),
      key_(config.d_model, config.d_model, config.attention, config.rank_threshold),
      value_(config.d_model, config.d_model, config.attention, config.rank_threshold),
      output_(config.d_model, config.d_model, config.attention, config.rank_threshold),
      heads_(config.heads),
      dropout_(config.dropout) {
  register_module("query", query_.module());
  register_module("key", key_.module());
  register_module("value", value_.module());
  register_module("output", output_.module());
}

at::Tensor SelfAttentionImpl::forward(const at::Tensor& x, const at::Tensor& mask_bias) {
  const int64_t dh = x.size(2) / heads_;
  const auto qkv = LinearLayer::shared_input(x, {&query_, &key_, &value_});
  const auto context = attention_core(qkv[0], qkv[1], qkv[2], mask_bias, heads_, dropout_,
                                      is_training(), 1.0 / std::sqrt(static_cast<double>(dh)));
  return output_(context);
}

void SelfAttentionImpl::pretty_print(std::ostream& stream) const {
  stream << "comera::SelfAttention(heads=" << heads_ << ", dropout=" << dropout_ << ")";
}

at::Tensor attention_mask_bias(const at::Tensor& mask, at::ScalarType dtype) {
  // A finite large negative (not -inf) keeps rows finite even for an all-padding sequence.
  const double big = dtype == at::kDouble ? 1e30 : 1e9;
  return ((mask == 0).to(dtype) * -big).view({mask.size(0), 1, 1, mask.size(1)});
}

}  // namespace comera
