#include "core/models/transformer.h"

#include "core/util/error.h"

#include <ATen/ATen.h>

#include <ostream>

namespace comera {

TransformerImpl::TransformerImpl(ModelConfig config) : config_(std::move(config)) {
  embeddings_ = register_module("embeddings", Embeddings(config_));
  for (int64_t i = 0; i < config_.layers; ++i)
    layers_.push_back(register_module("encoder" + std::to_string(i), EncoderLayer(config_)));
  if (config_.classes > 0)
    classification_ = register_module("classification", ClassificationHead(config_));
  if (config_.masked_lm) masked_lm_ = register_module("masked_lm", MaskedLMHead(config_));
}

at::Tensor TransformerImpl::forward(const at::Tensor& ids, const at::Tensor& segments,
                                    const at::Tensor& mask) {
  auto x = embeddings_->forward(ids, segments);
  const auto bias = attention_mask_bias(mask, x.scalar_type());
  for (auto& layer : layers_) x = layer->forward(x, bias);
  return x;
}

at::Tensor TransformerImpl::classify(const at::Tensor& ids, const at::Tensor& segments,
                                     const at::Tensor& mask) {
  if (!classification_)
    throw Error("the model has no classification head (set model.classes >= 1)");
  return classification_->forward(forward(ids, segments, mask));
}

MaskedLMHeadImpl& TransformerImpl::masked_lm_head() {
  if (!masked_lm_) throw Error("the model has no masked-LM head (set model.masked_lm: true)");
  return *masked_lm_;
}

at::Tensor TransformerImpl::masked_lm(const at::Tensor& ids, const at::Tensor& segments,
                                      const at::Tensor& mask, const at::Tensor& positions) {
  auto& head = masked_lm_head();
  auto hidden = forward(ids, segments, mask);
  // Only the asked positions go through the vocabulary-sized decoder.
  if (positions.defined()) hidden = hidden.reshape({-1, hidden.size(-1)}).index_select(0, positions);
  return head.forward(hidden, embeddings_->word().table());
}

VocabLoss TransformerImpl::masked_lm_loss(const at::Tensor& ids, const at::Tensor& segments,
                                         const at::Tensor& mask, const at::Tensor& positions,
                                         const at::Tensor& targets) {
  auto& head = masked_lm_head();
  const auto hidden = forward(ids, segments, mask);
  return head.loss(hidden.reshape({-1, hidden.size(-1)}).index_select(0, positions),
                          embeddings_->word().table(), targets);
}

void TransformerImpl::pretty_print(std::ostream& stream) const {
  stream << "comera::Transformer(layers=" << config_.layers << ", d_model=" << config_.d_model
         << ", heads=" << config_.heads << ", ffn=" << config_.ffn << ")";
}

std::vector<at::Tensor> TransformerImpl::projected_weights() const {
  std::vector<at::Tensor> out;
  for (const auto& item : named_parameters()) {
    const auto& name = item.key();
    const auto dot = name.rfind('.');
    if (item.value().dim() != 2 || name.substr(dot == std::string::npos ? 0 : dot + 1) != "weight") continue;
    if (name.find("attention.") != std::string::npos || name.find("ffn_") != std::string::npos)
      out.push_back(item.value());
  }
  return out;
}

}  // namespace comera
