#include "core/models/masked_lm_head.h"
#include "core/util/precision.h"

#include <ATen/ATen.h>

#include <cmath>

namespace comera {

MaskedLMHeadImpl::MaskedLMHeadImpl(const ModelConfig& config)
    : transform_(config.d_model, config.d_model, LinearSpec{}, config.rank_threshold) {
  register_module("transform", transform_.module());
  norm_ = register_module(
      "norm", torch::nn::LayerNorm(
                  torch::nn::LayerNormOptions({config.d_model}).eps(config.layer_norm_eps)));
  bias_ = register_parameter("bias", at::zeros({config.vocab}));
}

at::Tensor MaskedLMHeadImpl::decoder_input(const at::Tensor& hidden) {
  const int64_t d = hidden.size(-1);
  // The table's rows have norm ~sqrt(d) (N(0, 1) entries, unlike BERT's N(0, 0.02)), as does the
  // LayerNorm output: scaling by 1/sqrt(d), as T5 does for its tied output layer, starts the
  // logits near 0 instead of at a standard deviation of sqrt(d).
  return norm_->forward(float_activation(at::gelu(transform_(hidden)))).reshape({-1, d}) *
         (1.0 / std::sqrt(static_cast<double>(d)));
}

at::Tensor MaskedLMHeadImpl::forward(const at::Tensor& hidden, const at::Tensor& word_table) {
  const auto h = decoder_input(hidden);
  auto sizes = hidden.sizes().vec();
  sizes.back() = word_table.size(0);
  return at::addmm(bias_, h, word_table.t()).view(sizes);
}

VocabLoss MaskedLMHeadImpl::loss(const at::Tensor& hidden, const at::Tensor& word_table,
                                 const at::Tensor& targets) {
  // 1M logits (4 MB in float32) per chunk: a small model's step holds little else, so a larger
  // chunk would set its peak; 32 rows of BERT's 30k words still make a GEMM worth its call.
  return chunked_cross_entropy(decoder_input(hidden), word_table, bias_, targets, int64_t{1} << 20);
}

}  // namespace comera
