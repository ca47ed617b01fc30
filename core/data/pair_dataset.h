#pragma once
// Sentence pairs encoded for BERT ([CLS] a [SEP] b [SEP] with segment ids) and batched as
// tensors (token_dataset.h).
#include "core/data/mnli.h"
#include "core/data/token_dataset.h"
#include "core/data/wordpiece_tokenizer.h"

#include <cstdint>
#include <string>
#include <vector>

namespace comera {

// BERT's pair encoding: when the pair does not fit `max_length` tokens (with its 3 special
// tokens), tokens are dropped from the end of the longer side first (BERT's truncate_seq_pair).
EncodedTokens encode_pair(const WordPieceTokenizer& tokenizer, const std::string& a,
                          const std::string& b, int64_t label, int64_t max_length = 128);

class PairDataset : public TokenDataset {
 public:
  explicit PairDataset(std::vector<EncodedTokens> pairs, int64_t pad_id = 0)
      : TokenDataset(std::move(pairs), pad_id, "pair") {}
  // Encodes every example (in parallel over the intra-op threads).
  static PairDataset encode(const std::vector<PairExample>& examples,
                            const WordPieceTokenizer& tokenizer, int64_t max_length = 128);
  using TokenDataset::label_counts;
  std::vector<int64_t> label_counts() const { return label_counts(kNliClasses); }
};

}  // namespace comera
