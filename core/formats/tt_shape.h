#pragma once
// Shape of a TT matrix (METHOD §1): in = n_1..n_d, out = m_1..m_d, 2d cores of shape
// (r_{k-1}, s_k, r_k) with s = (n_1..n_d, m_1..m_d).
#include "core/formats/core_chain.h"

#include <cstdint>
#include <string>
#include <vector>

namespace comera {

class TTShape {
 public:
  TTShape() = default;
  // ranks: 2d+1 entries, r_0 = r_2d = 1.
  TTShape(std::vector<int64_t> in_modes, std::vector<int64_t> out_modes, std::vector<int64_t> ranks);
  // Every interior bond at `rank`, capped at its full-rank bound.
  static TTShape uniform(std::vector<int64_t> in_modes, std::vector<int64_t> out_modes, int64_t rank);
  // Checks in_modes/out_modes multiply to in/out, with a message naming both.
  static TTShape for_features(int64_t in, int64_t out, std::vector<int64_t> in_modes,
                              std::vector<int64_t> out_modes, std::vector<int64_t> ranks);

  int64_t d() const { return static_cast<int64_t>(in_modes_.size()); }
  int64_t in_features() const;
  int64_t out_features() const;
  const std::vector<int64_t>& in_modes() const { return in_modes_; }
  const std::vector<int64_t>& out_modes() const { return out_modes_; }
  const std::vector<int64_t>& ranks() const { return chain_.ranks(); }
  const CoreChain& chain() const { return chain_; }
  // Mode size s_k of core k (0-based, k < 2d).
  int64_t mode(int64_t k) const { return chain_.core_size(k); }
  int64_t params() const { return chain_.params(); }
  std::string str() const;  // "[12,8,8|8,8,12] r=1,12,30,30,30,12,1"

 private:
  std::vector<int64_t> in_modes_, out_modes_;
  CoreChain chain_;
};

}  // namespace comera
