#pragma once
// Masked-LM head (BERT): transform d×d -> GELU -> LayerNorm -> decoder to the vocabulary, the
// decoder tied to the word embedding table (dense or TTM) plus a bias per word, as in BERT: an
// untied d×vocab decoder would outweigh a compressed encoder many times over.
#include "core/models/chunked_cross_entropy.h"
#include "core/models/model_config.h"
#include "core/models/switchable.h"

#include <torch/nn/module.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/pimpl.h>

namespace comera {

class MaskedLMHeadImpl : public torch::nn::Module {
 public:
  explicit MaskedLMHeadImpl(const ModelConfig& config);
  // hidden: (..., d_model), word_table: (vocab, d_model) -> (..., vocab) logits.
  at::Tensor forward(const at::Tensor& hidden, const at::Tensor& word_table);
  // hidden: (N, d_model) at the masked positions, targets: (N) -> their mean cross-entropy and
  // correct count, without (N, vocab) logits kept for backward (chunked_cross_entropy.h).
  VocabLoss loss(const at::Tensor& hidden, const at::Tensor& word_table, const at::Tensor& targets);

 private:
  // (N, d_model) rows that multiply the table's transpose.
  at::Tensor decoder_input(const at::Tensor& hidden);

  LinearLayer transform_;
  torch::nn::LayerNorm norm_{nullptr};
  at::Tensor bias_;
};

TORCH_MODULE(MaskedLMHead);

}  // namespace comera
