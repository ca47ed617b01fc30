#pragma once
// Input embeddings of the encoder: word (dense or TTM) + learned position + segment, then
// LayerNorm and dropout (BERT).
#include "core/models/model_config.h"
#include "core/models/switchable.h"

#include <torch/nn/cloneable.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/pimpl.h>

namespace comera {

class EmbeddingsImpl : public torch::nn::Module {
 public:
  explicit EmbeddingsImpl(const ModelConfig& config);
  // ids, segments: (B, T) int64 -> (B, T, d_model).
  at::Tensor forward(const at::Tensor& ids, const at::Tensor& segments);
  void pretty_print(std::ostream& stream) const override;

  const EmbeddingLayer& word() const { return word_; }

 private:
  EmbeddingLayer word_;
  torch::nn::Embedding position_{nullptr}, segment_{nullptr};
  torch::nn::LayerNorm norm_{nullptr};
  double dropout_;
};

TORCH_MODULE(Embeddings);

}  // namespace comera
