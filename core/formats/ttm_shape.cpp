#include "core/formats/ttm_shape.h"

#include "core/util/error.h"

namespace comera {

namespace {

std::string modes_str(const std::vector<int64_t>& v, const std::vector<int64_t>& e) {
  return "[" + join_dims(v) + "]x[" + join_dims(e) + "]";
}

std::vector<int64_t> validated_core_sizes(int64_t vocab, const std::vector<int64_t>& v,
                                          const std::vector<int64_t>& e) {
  const std::string what = "TTMShape " + modes_str(v, e);
  if (v.empty() || v.size() != e.size())
    throw Error(what + ": needs the same number (>= 1) of vocabulary and embedding modes, got " +
                std::to_string(v.size()) + " and " + std::to_string(e.size()));
  std::vector<int64_t> sizes;
  int64_t rows = 1;
  for (size_t k = 0; k < v.size(); ++k) {
    if (v[k] < 1 || e[k] < 1)
      throw Error(what + ": mode pair " + std::to_string(k) + " is (" + std::to_string(v[k]) +
                  ", " + std::to_string(e[k]) + "); every mode must be >= 1");
    sizes.push_back(v[k] * e[k]);
    rows *= v[k];
  }
  if (vocab < 1 || vocab > rows)
    throw Error(what + ": vocabulary of " + std::to_string(vocab) +
                " rows does not fit the " + std::to_string(rows) +
                " rows the vocabulary modes give; choose modes whose product is >= " +
                std::to_string(vocab));
  return sizes;
}

}  // namespace

TTMShape::TTMShape(int64_t vocab, std::vector<int64_t> vocab_modes, std::vector<int64_t> emb_modes,
                   std::vector<int64_t> ranks)
    : vocab_(vocab), vocab_modes_(std::move(vocab_modes)), emb_modes_(std::move(emb_modes)) {
  chain_ = CoreChain(validated_core_sizes(vocab_, vocab_modes_, emb_modes_), std::move(ranks),
                     "TTMShape " + modes_str(vocab_modes_, emb_modes_));
}

TTMShape TTMShape::uniform(int64_t vocab, std::vector<int64_t> vocab_modes,
                           std::vector<int64_t> emb_modes, int64_t rank) {
  auto ranks = capped_uniform_ranks(validated_core_sizes(vocab, vocab_modes, emb_modes), rank);
  return TTMShape(vocab, std::move(vocab_modes), std::move(emb_modes), std::move(ranks));
}

int64_t TTMShape::padded_vocab() const {
  int64_t p = 1;
  for (int64_t x : vocab_modes_) p *= x;
  return p;
}

int64_t TTMShape::dim() const {
  int64_t p = 1;
  for (int64_t x : emb_modes_) p *= x;
  return p;
}

std::string TTMShape::str() const {
  return modes_str(vocab_modes_, emb_modes_) + " r=" + join_dims(ranks());
}

}  // namespace comera
