#include "core/data/dataset.h"

#include "core/util/error.h"
#include "core/util/random.h"

#include <algorithm>
#include <numeric>

namespace comera {

std::vector<std::vector<int64_t>> Dataset::epoch(int64_t batch_size,
                                                 std::optional<uint64_t> shuffle_seed,
                                                 bool drop_last) const {
  if (batch_size < 1)
    throw Error("batch size " + std::to_string(batch_size) + " must be at least 1");
  const int64_t n = size();
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  if (shuffle_seed) order = Rng(*shuffle_seed).permutation(n);
  std::vector<std::vector<int64_t>> batches;
  for (int64_t start = 0; start < n; start += batch_size) {
    const int64_t end = std::min(n, start + batch_size);
    if (drop_last && end - start < batch_size) break;
    batches.emplace_back(order.begin() + start, order.begin() + end);
  }
  return batches;
}

namespace {

class IndexedBatches : public BatchStream {
 public:
  IndexedBatches(const Dataset& data, std::vector<std::vector<int64_t>> order, size_t skip, Shard shard)
      : data_(data), order_(std::move(order)), next_(skip), shard_(shard) {}
  bool next(Batch& out) override {
    if (next_ >= order_.size()) return false;
    const auto& all = order_[next_++];
    const auto [begin, end] = shard_.range(static_cast<int64_t>(all.size()));
    out = data_.batch(std::vector<int64_t>(all.begin() + begin, all.begin() + end));
    return true;
  }

 private:
  const Dataset& data_;
  std::vector<std::vector<int64_t>> order_;
  size_t next_;
  Shard shard_;
};

}  // namespace

std::string Dataset::order_key() const { return std::to_string(size()) + " " + unit(); }

std::unique_ptr<BatchStream> Dataset::batches(int64_t batch_size, std::optional<uint64_t> shuffle_seed,
                                              int64_t skip, Shard shard) const {
  return std::make_unique<IndexedBatches>(*this, epoch(batch_size, shuffle_seed),
                                          static_cast<size_t>(std::max<int64_t>(0, skip)), shard);
}

}  // namespace comera
