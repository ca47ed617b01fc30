#include "core/formats/core_chain.h"

#include "core/util/error.h"

#include <algorithm>
#include <sstream>

namespace comera {

namespace {

// Saturating product: bounds only need to be compared with ranks, never used as sizes.
int64_t capped_product(const std::vector<int64_t>& v, size_t begin, size_t end) {
  const int64_t cap = int64_t{1} << 40;
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p = std::min(cap, p * v[i]);
  return p;
}

}  // namespace

std::string join_dims(const std::vector<int64_t>& v, const char* sep) {
  std::ostringstream os;
  for (size_t i = 0; i < v.size(); ++i) os << (i ? sep : "") << v[i];
  return os.str();
}

CoreChain::CoreChain(std::vector<int64_t> core_sizes, std::vector<int64_t> ranks,
                     const std::string& what)
    : core_sizes_(std::move(core_sizes)), ranks_(std::move(ranks)) {
  const size_t K = core_sizes_.size();
  if (K == 0) throw Error(what + ": no cores (give at least one mode per side)");
  if (ranks_.size() != K + 1)
    throw Error(what + ": ranks list has " + std::to_string(ranks_.size()) + " entries [" +
                join_dims(ranks_) + "], expected " + std::to_string(K + 1) +
                " (one per bond, including the boundary ranks r_0 = r_" + std::to_string(K) +
                " = 1)");
  for (size_t k = 0; k <= K; ++k)
    if (ranks_[k] < 1)
      throw Error(what + ": rank r_" + std::to_string(k) + " = " + std::to_string(ranks_[k]) +
                  " is below 1 (every rank must be >= 1)");
  if (ranks_.front() != 1 || ranks_.back() != 1)
    throw Error(what + ": boundary ranks must be 1, got r_0 = " + std::to_string(ranks_.front()) +
                " and r_" + std::to_string(K) + " = " + std::to_string(ranks_.back()));
  for (size_t k = 1; k < K; ++k) {
    const int64_t bound = max_rank(static_cast<int64_t>(k));
    if (ranks_[k] > bound)
      throw Error(what + ": rank r_" + std::to_string(k) + " = " + std::to_string(ranks_[k]) +
                  " exceeds its full-rank bound " + std::to_string(bound) +
                  " (min of the mode products on either side); lower it to at most " +
                  std::to_string(bound));
  }
}

int64_t CoreChain::max_rank(int64_t bond) const {
  const size_t k = static_cast<size_t>(bond);
  return std::min(capped_product(core_sizes_, 0, k),
                  capped_product(core_sizes_, k, core_sizes_.size()));
}

int64_t CoreChain::params() const {
  int64_t total = 0;
  for (size_t k = 0; k < core_sizes_.size(); ++k)
    total += ranks_[k] * core_sizes_[k] * ranks_[k + 1];
  return total;
}

std::vector<int64_t> capped_uniform_ranks(const std::vector<int64_t>& core_sizes, int64_t rank) {
  const size_t K = core_sizes.size();
  std::vector<int64_t> ranks(K + 1, 1);
  for (size_t k = 1; k < K; ++k)
    ranks[k] = std::min({rank, capped_product(core_sizes, 0, k),
                         capped_product(core_sizes, k, K)});
  return ranks;
}

}  // namespace comera
