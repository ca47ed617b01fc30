#pragma once
// Sentence pairs encoded for BERT ([CLS] a [SEP] b [SEP] with segment ids) and batched as
// tensors: padded to the longest pair of the batch or to a fixed length, in a fixed or seeded
// shuffled order.
#include "core/data/dataset.h"
#include "core/data/mnli.h"
#include "core/data/wordpiece_tokenizer.h"

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

namespace comera {

struct EncodedPair {
  std::vector<int64_t> input_ids;    // [CLS] a [SEP] b [SEP], no padding
  std::vector<int64_t> segment_ids;  // 0 through the first [SEP], 1 after it
  int64_t label = 0;
};

// BERT's pair encoding: when the pair does not fit `max_length` tokens (with its 3 special
// tokens), tokens are dropped from the end of the longer side first (BERT's truncate_seq_pair).
EncodedPair encode_pair(const WordPieceTokenizer& tokenizer, const std::string& a,
                        const std::string& b, int64_t label, int64_t max_length = 128);

// A PairDataset's batch holds these int64 tensors: input_ids (B, T), padded with the
// vocabulary's [PAD] id; segment_ids (B, T), 0 on padding; attention_mask (B, T), 1 on tokens
// and 0 on padding; labels (B).
class PairDataset : public Dataset {
 public:
  explicit PairDataset(std::vector<EncodedPair> pairs, int64_t pad_id = 0);
  // Encodes every example (in parallel over the intra-op threads).
  static PairDataset encode(const std::vector<PairExample>& examples,
                            const WordPieceTokenizer& tokenizer, int64_t max_length = 128);

  int64_t size() const override { return static_cast<int64_t>(pairs_.size()); }
  std::string unit() const override { return "pairs"; }
  const EncodedPair& operator[](int64_t i) const { return pairs_.at(static_cast<size_t>(i)); }
  int64_t longest() const;  // tokens in the longest pair
  std::vector<int64_t> label_counts(int64_t classes = kNliClasses) const;

  // The pairs at `indices` as tensors, padded to the longest of them.
  Batch batch(const std::vector<int64_t>& indices) const override { return batch(indices, 0); }
  // Padded to pad_to tokens (an error if a pair is longer), or to the longest when 0.
  Batch batch(const std::vector<int64_t>& indices, int64_t pad_to) const;

 private:
  std::vector<EncodedPair> pairs_;
  int64_t pad_id_;
};

}  // namespace comera
