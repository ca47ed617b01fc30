#include "core/models/embeddings.h"

#include "core/models/dropout.h"
#include "core/util/error.h"
#include "core/util/precision.h"

#include <ATen/ATen.h>

#include <ostream>

namespace comera {

EmbeddingsImpl::EmbeddingsImpl(const ModelConfig& config)
    : word_(config.vocab, config.d_model, config.embedding, config.rank_threshold),
      dropout_(config.dropout) {
  register_module("word", word_.module());
  position_ = register_module(
      "position", torch::nn::Embedding(torch::nn::EmbeddingOptions(config.max_positions, config.d_model)));
  segment_ = register_module(
      "segment", torch::nn::Embedding(torch::nn::EmbeddingOptions(config.segments, config.d_model)));
  norm_ = register_module(
      "norm", torch::nn::LayerNorm(
                  torch::nn::LayerNormOptions({config.d_model}).eps(config.layer_norm_eps)));
}

at::Tensor EmbeddingsImpl::forward(const at::Tensor& ids, const at::Tensor& segments) {
  const int64_t length = ids.size(1);
  if (length > position_->options.num_embeddings())
    throw Error("sequence length " + std::to_string(length) + " exceeds model.max_positions " +
                std::to_string(position_->options.num_embeddings()) +
                " (shorten the inputs or raise max_positions)");
  const auto positions = at::arange(length, ids.options());
  auto x = word_(ids) + position_->forward(positions) + segment_->forward(segments);
  // Layer norm in float32, as autocast does (a bf16 forward's TTM rows are bf16).
  return fast_dropout(norm_->forward(float_activation(x)), dropout_, is_training());
}

void EmbeddingsImpl::pretty_print(std::ostream& stream) const {
  stream << "comera::Embeddings(dropout=" << dropout_ << ")";
}

}  // namespace comera
