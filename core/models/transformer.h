#pragma once
// BERT-style encoder (METHOD §7): embeddings, `layers` post-LN encoder layers, and the heads
// the config asks for (classification, masked LM).
#include "core/models/classification_head.h"
#include "core/models/embeddings.h"
#include "core/models/encoder_layer.h"
#include "core/models/masked_lm_head.h"
#include "core/models/model_config.h"
#include "core/models/projected_weights.h"

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <vector>

namespace comera {

class TransformerImpl : public torch::nn::Module, public ProjectedWeights {
 public:
  explicit TransformerImpl(ModelConfig config);
  // ids, segments: (B, T) int64; mask: (B, T), nonzero for real tokens. -> (B, T, d_model).
  at::Tensor forward(const at::Tensor& ids, const at::Tensor& segments, const at::Tensor& mask);
  // (B, classes) logits from [CLS].
  at::Tensor classify(const at::Tensor& ids, const at::Tensor& segments, const at::Tensor& mask);
  // Vocabulary logits at `positions` (flat indices into B*T) -> (N, vocab); undefined
  // positions: every position -> (B, T, vocab).
  at::Tensor masked_lm(const at::Tensor& ids, const at::Tensor& segments, const at::Tensor& mask,
                       const at::Tensor& positions = {});
  // The masked-LM loss at `positions` against `targets` (N), the vocabulary logits never all
  // kept at once (MaskedLMHead::loss).
  VocabLoss masked_lm_loss(const at::Tensor& ids, const at::Tensor& segments, const at::Tensor& mask,
                           const at::Tensor& positions, const at::Tensor& targets);
  void pretty_print(std::ostream& stream) const override;
  // The attention and FFN linears' 2-D weights (dense or low-rank factors alike).
  std::vector<at::Tensor> projected_weights() const override;

  const ModelConfig& config() const { return config_; }

 private:
  MaskedLMHeadImpl& masked_lm_head();  // throws when the config has none

  ModelConfig config_;
  Embeddings embeddings_{nullptr};
  std::vector<EncoderLayer> layers_;
  ClassificationHead classification_{nullptr};
  MaskedLMHead masked_lm_{nullptr};
};

TORCH_MODULE(Transformer);

}  // namespace comera
