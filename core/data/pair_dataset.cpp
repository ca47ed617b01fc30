#include "core/data/pair_dataset.h"

#include "core/util/error.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>

namespace comera {

EncodedPair encode_pair(const WordPieceTokenizer& tokenizer, const std::string& a,
                        const std::string& b, int64_t label, int64_t max_length) {
  if (max_length < 3)
    throw Error("pair max_length " + std::to_string(max_length) +
                " leaves no room for [CLS] a [SEP] b [SEP]; use at least 3 (BERT uses 128)");
  auto first = tokenizer.encode(a), second = tokenizer.encode(b);
  const size_t room = static_cast<size_t>(max_length - 3);
  while (first.size() + second.size() > room)
    (first.size() > second.size() ? first : second).pop_back();
  EncodedPair pair;
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

PairDataset::PairDataset(std::vector<EncodedPair> pairs, int64_t pad_id)
    : pairs_(std::move(pairs)), pad_id_(pad_id) {}

PairDataset PairDataset::encode(const std::vector<PairExample>& examples,
                                const WordPieceTokenizer& tokenizer, int64_t max_length) {
  std::vector<EncodedPair> pairs(examples.size());
  at::parallel_for(0, static_cast<int64_t>(examples.size()), 256, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const auto& e = examples[i];
      pairs[i] = encode_pair(tokenizer, e.sentence1, e.sentence2, static_cast<int64_t>(e.label),
                             max_length);
    }
  });
  return PairDataset(std::move(pairs), tokenizer.pad_id());
}

int64_t PairDataset::longest() const {
  size_t n = 0;
  for (const auto& p : pairs_) n = std::max(n, p.input_ids.size());
  return static_cast<int64_t>(n);
}

std::vector<int64_t> PairDataset::label_counts(int64_t classes) const {
  std::vector<int64_t> counts(static_cast<size_t>(classes), 0);
  for (const auto& p : pairs_) {
    if (p.label < 0 || p.label >= classes)
      throw Error("label " + std::to_string(p.label) + " is outside 0.." +
                  std::to_string(classes - 1));
    ++counts[static_cast<size_t>(p.label)];
  }
  return counts;
}

Batch PairDataset::batch(const std::vector<int64_t>& indices, int64_t pad_to) const {
  if (indices.empty()) throw Error("PairDataset::batch: no indices given");
  int64_t width = 0;
  for (int64_t i : indices) width = std::max<int64_t>(width, (*this)[i].input_ids.size());
  if (pad_to > 0) {
    if (pad_to < width)
      throw Error("a pair of " + std::to_string(width) + " tokens does not fit the fixed length " +
                  std::to_string(pad_to) + "; pad to at least the encoding's max_length");
    width = pad_to;
  }
  const int64_t rows = static_cast<int64_t>(indices.size());
  auto input_ids = at::full({rows, width}, pad_id_, at::kLong);
  auto segment_ids = at::zeros({rows, width}, at::kLong);
  auto attention_mask = at::zeros({rows, width}, at::kLong);
  auto label_tensor = at::empty({rows}, at::kLong);
  int64_t* ids = input_ids.data_ptr<int64_t>();
  int64_t* segments = segment_ids.data_ptr<int64_t>();
  int64_t* mask = attention_mask.data_ptr<int64_t>();
  int64_t* labels = label_tensor.data_ptr<int64_t>();
  for (int64_t r = 0; r < rows; ++r) {
    const auto& p = (*this)[indices[r]];
    std::copy(p.input_ids.begin(), p.input_ids.end(), ids + r * width);
    std::copy(p.segment_ids.begin(), p.segment_ids.end(), segments + r * width);
    std::fill_n(mask + r * width, p.input_ids.size(), 1);
    labels[r] = p.label;
  }
  Batch b(rows);
  b.set("input_ids", std::move(input_ids));
  b.set("segment_ids", std::move(segment_ids));
  b.set("attention_mask", std::move(attention_mask));
  b.set("labels", std::move(label_tensor));
  return b;
}

}  // namespace comera
