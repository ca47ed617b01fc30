#pragma once
// Token sequences with one class label each, batched as the transformer reads them; sentence
// pairs (pair_dataset.h) and single texts (text_dataset.h) differ only in how they encode.
#include "core/data/dataset.h"

#include <cstdint>
#include <string>
#include <vector>

namespace comera {

struct EncodedTokens {
  std::vector<int64_t> input_ids;    // [CLS] ... [SEP], no padding
  std::vector<int64_t> segment_ids;  // pairs: 0 through the first [SEP], 1 after it; texts: 0
  int64_t label = 0;
};

// A batch holds these int64 tensors: input_ids (B, T), padded with the vocabulary's [PAD] id;
// segment_ids (B, T), 0 on padding; attention_mask (B, T), 1 on tokens and 0 on padding;
// labels (B).
// A token batch cut to its first `length` tokens (input_ids, segment_ids, attention_mask; a
// narrower batch is returned as it is): a training phase at a shorter sequence length. An
// example cut short loses its closing [SEP].
Batch cut_tokens(Batch batch, int64_t length);

class TokenDataset : public Dataset {
 public:
  // `example` names one example in messages ("pair", "text").
  TokenDataset(std::vector<EncodedTokens> examples, int64_t pad_id, std::string example);

  int64_t size() const override { return static_cast<int64_t>(examples_.size()); }
  std::string unit() const override { return example_ + "s"; }
  const EncodedTokens& operator[](int64_t i) const { return examples_.at(static_cast<size_t>(i)); }
  int64_t longest() const;  // tokens in the longest example
  // Examples per label 0..classes-1; a label outside is an error.
  std::vector<int64_t> label_counts(int64_t classes) const;
  // The largest label + 1 (0 when empty): the classes a model needs for this data.
  int64_t classes() const;

  // The examples at `indices` as tensors, padded to the longest of them.
  Batch batch(const std::vector<int64_t>& indices) const override { return batch(indices, 0); }
  // Padded to pad_to tokens (an error if an example is longer), or to the longest when 0.
  Batch batch(const std::vector<int64_t>& indices, int64_t pad_to) const;

 private:
  std::vector<EncodedTokens> examples_;
  int64_t pad_id_;
  std::string example_;
};

}  // namespace comera
