#include "core/data/token_dataset.h"

#include "core/util/error.h"

#include <ATen/ATen.h>

#include <algorithm>

namespace comera {

TokenDataset::TokenDataset(std::vector<EncodedTokens> examples, int64_t pad_id, std::string example)
    : examples_(std::move(examples)), pad_id_(pad_id), example_(std::move(example)) {}

int64_t TokenDataset::longest() const {
  size_t n = 0;
  for (const auto& e : examples_) n = std::max(n, e.input_ids.size());
  return static_cast<int64_t>(n);
}

std::vector<int64_t> TokenDataset::label_counts(int64_t classes) const {
  std::vector<int64_t> counts(static_cast<size_t>(classes), 0);
  for (const auto& e : examples_) {
    if (e.label < 0 || e.label >= classes)
      throw Error("label " + std::to_string(e.label) + " is outside 0.." +
                  std::to_string(classes - 1));
    ++counts[static_cast<size_t>(e.label)];
  }
  return counts;
}

int64_t TokenDataset::classes() const {
  int64_t n = 0;
  for (const auto& e : examples_) n = std::max(n, e.label + 1);
  return n;
}

Batch cut_tokens(Batch batch, int64_t length) {
  for (const char* name : {"input_ids", "segment_ids", "attention_mask"}) {
    const auto& t = batch.at(name);
    if (t.size(1) > length) batch.set(name, t.narrow(1, 0, length));
  }
  return batch;
}

Batch TokenDataset::batch(const std::vector<int64_t>& indices, int64_t pad_to) const {
  if (indices.empty()) throw Error("TokenDataset::batch: no indices given");
  int64_t width = 0;
  for (int64_t i : indices) width = std::max<int64_t>(width, (*this)[i].input_ids.size());
  if (pad_to > 0) {
    if (pad_to < width)
      throw Error("a " + example_ + " of " + std::to_string(width) +
                  " tokens does not fit the fixed length " + std::to_string(pad_to) +
                  "; pad to at least the encoding's max_length");
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
    const auto& e = (*this)[indices[r]];
    std::copy(e.input_ids.begin(), e.input_ids.end(), ids + r * width);
    std::copy(e.segment_ids.begin(), e.segment_ids.end(), segments + r * width);
    std::fill_n(mask + r * width, e.input_ids.size(), 1);
    labels[r] = e.label;
  }
  Batch b(rows);
  b.set("input_ids", std::move(input_ids));
  b.set("segment_ids", std::move(segment_ids));
  b.set("attention_mask", std::move(attention_mask));
  b.set("labels", std::move(label_tensor));
  return b;
}

}  // namespace comera
