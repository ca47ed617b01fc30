#include "core/data/pair_dataset.h"

#include "core/util/error.h"

#include <ATen/Parallel.h>

namespace comera {

EncodedTokens encode_pair(const WordPieceTokenizer& tokenizer, const std::string& a,
                          const std::string& b, int64_t label, int64_t max_length) {
  if (max_length < 3)
    throw Error("pair max_length " + std::to_string(max_length) +
                " leaves no room for [CLS] a [SEP] b [SEP]; use at least 3 (BERT uses 128)");
  auto first = tokenizer.encode(a), second = tokenizer.encode(b);
  const size_t room = static_cast<size_t>(max_length - 3);
  while (first.size() + second.size() > room)
    (first.size() > second.size() ? first : second).pop_back();
  EncodedTokens pair;
  pair.label = label;
  pair.input_ids.reserve(first.size() + second.size() + 3);
  pair.input_ids.push_back(tokenizer.cls_id());
  pair.input_ids.insert(pair.input_ids.end(), first.begin(), first.end());
  pair.input_ids.push_back(tokenizer.sep_id());
  pair.segment_ids.assign(pair.input_ids.size(), 0);
  pair.input_ids.insert(pair.input_ids.end(), second.begin(), second.end());
  pair.input_ids.push_back(tokenizer.sep_id());
  pair.segment_ids.resize(pair.input_ids.size(), 1);
  return pair;
}

PairDataset PairDataset::encode(const std::vector<PairExample>& examples,
                                const WordPieceTokenizer& tokenizer, int64_t max_length) {
  std::vector<EncodedTokens> pairs(examples.size());
  at::parallel_for(0, static_cast<int64_t>(examples.size()), 256, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const auto& e = examples[i];
      pairs[i] = encode_pair(tokenizer, e.sentence1, e.sentence2, static_cast<int64_t>(e.label),
                             max_length);
    }
  });
  return PairDataset(std::move(pairs), tokenizer.pad_id());
}

}  // namespace comera
