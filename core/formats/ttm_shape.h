#pragma once
// Shape of a TTM embedding table (METHOD §1): V = v_1..v_d rows (may exceed the vocabulary),
// D = e_1..e_d columns, d cores of shape (r_{k-1}, v_k, e_k, r_k).
#include "core/formats/core_chain.h"

#include <cstdint>
#include <string>
#include <vector>

namespace comera {

class TTMShape {
 public:
  TTMShape() = default;
  // ranks: d+1 entries, r_0 = r_d = 1. vocab: rows actually used (<= prod v_k).
  TTMShape(int64_t vocab, std::vector<int64_t> vocab_modes, std::vector<int64_t> emb_modes,
           std::vector<int64_t> ranks);
  static TTMShape uniform(int64_t vocab, std::vector<int64_t> vocab_modes,
                          std::vector<int64_t> emb_modes, int64_t rank);

  int64_t d() const { return static_cast<int64_t>(vocab_modes_.size()); }
  int64_t vocab() const { return vocab_; }
  int64_t padded_vocab() const;  // prod v_k
  int64_t dim() const;           // prod e_k
  const std::vector<int64_t>& vocab_modes() const { return vocab_modes_; }
  const std::vector<int64_t>& emb_modes() const { return emb_modes_; }
  const std::vector<int64_t>& ranks() const { return chain_.ranks(); }
  const CoreChain& chain() const { return chain_; }
  int64_t params() const { return chain_.params(); }
  std::string str() const;

 private:
  int64_t vocab_ = 0;
  std::vector<int64_t> vocab_modes_, emb_modes_;
  CoreChain chain_;
};

}  // namespace comera
