#pragma once
// BERT's masked-LM corruption of a batch, with the per-sequence count of RoBERTa/CodeBERT
// (fairseq's MaskTokensDataset): a sequence of L real, non-special tokens has floor(p·L + u)
// of them chosen (u uniform in [0, 1), so p·L on average), uniformly without replacement; a
// chosen token becomes [MASK] (80%), a random non-special id (10%) or stays (10%), each decided
// by its own draw, and the model is asked for the original at every chosen position.
#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace comera {

struct MaskingOptions {
  double probability = 0.15;
  int64_t mask_id = 0;
  int64_t vocab_size = 0;
  std::vector<int64_t> never;  // ids never chosen nor drawn as random ids ([CLS], [SEP], [PAD])
};

struct MaskedTokens {
  at::Tensor input_ids;  // (B, T) the corrupted ids
  at::Tensor positions;  // (N) chosen positions, as flat indices into B*T, ascending
  at::Tensor targets;    // (N) the original ids there
};

// ids, attention_mask: (B, T) int64. At least one position is chosen whenever the batch has an
// eligible token, so the loss is always defined; with none eligible it is an error.
MaskedTokens mask_tokens(const at::Tensor& ids, const at::Tensor& attention_mask,
                         const MaskingOptions& options, const at::Generator& generator);

}  // namespace comera
