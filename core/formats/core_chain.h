#pragma once
// A chain of tensor-train cores: core k has shape (r_{k-1}, n_k, r_k) once its mode dims are
// flattened into n_k, with r_0 = r_K = 1. TT matrices and TTM tables are both chains; this is
// the one place their rank lists are validated and their sizes counted.
#include <cstdint>
#include <string>
#include <vector>

namespace comera {

class CoreChain {
 public:
  CoreChain() = default;
  // `what` names the layer or shape in error messages (e.g. "TTShape [12,8,8|8,8,12]").
  CoreChain(std::vector<int64_t> core_sizes, std::vector<int64_t> ranks, const std::string& what);

  int64_t cores() const { return static_cast<int64_t>(core_sizes_.size()); }
  int64_t core_size(int64_t k) const { return core_sizes_.at(k); }
  const std::vector<int64_t>& core_sizes() const { return core_sizes_; }
  // ranks().size() == cores() + 1, first and last are 1.
  const std::vector<int64_t>& ranks() const { return ranks_; }
  int64_t rank(int64_t bond) const { return ranks_.at(bond); }
  // Full-rank bound of interior bond k (1 <= k < cores()): min(prod n_1..n_k, prod n_{k+1}..n_K).
  int64_t max_rank(int64_t bond) const;
  // Number of core entries: sum_k r_{k-1} * n_k * r_k.
  int64_t params() const;

 private:
  std::vector<int64_t> core_sizes_;
  std::vector<int64_t> ranks_;
};

// Ranks for a chain from one uniform interior rank, each bond capped at its full-rank bound.
std::vector<int64_t> capped_uniform_ranks(const std::vector<int64_t>& core_sizes, int64_t rank);

std::string join_dims(const std::vector<int64_t>& v, const char* sep = ",");

}  // namespace comera
