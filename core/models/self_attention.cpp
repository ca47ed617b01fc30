#include "core/models/self_attention.h"

#include "core/models/dropout.h"

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
  const int64_t B = x.size(0), T = x.size(1), D = x.size(2), dh = D / heads_;
  // (B, T, D) -> (B, h, T, dh)
  auto split = [&](const at::Tensor& t) { return t.view({B, T, heads_, dh}).transpose(1, 2); };
  // Scaling q (B·T·D entries) is cheaper than scaling the scores (B·h·T·T).
  const auto q = split(query_(x) * (1.0 / std::sqrt(static_cast<double>(dh))));
  const auto k = split(key_(x));
  const auto v = split(value_(x));
  auto scores = at::matmul(q, k.transpose(-2, -1));
  scores.add_(mask_bias);
  auto probs = softmax_dropout(scores, dropout_, is_training());
  auto context = at::matmul(probs, v).transpose(1, 2).reshape({B, T, D});
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
