#pragma once
// Click logs trained on straight from their file (data.criteo.stream): each epoch reads the
// line range afresh, shuffled within a buffer by the epoch's seed, so memory stays bounded by
// the buffer whatever the file's size (the Kaggle train.txt: 45.8M lines, 11 GB). A resumed
// run re-reads its epoch up to where it stopped, which gives the same order again.
#include "core/data/criteo.h"

namespace comera {

class ClickStreamDataset : public Dataset {
 public:
  // `lines`: the examples the range holds (at most `limit` of them when > 0), counted by the
  // caller; malformed lines skipped make the epochs that much shorter.
  ClickStreamDataset(std::string path, CriteoFormat format, CriteoReadOptions options,
                     int64_t lines, int64_t shuffle_buffer, int64_t limit = 0);
  int64_t size() const override { return size_; }
  // Streamed examples have no index: read them through batches().
  Batch batch(const std::vector<int64_t>& indices) const override;
  std::string unit() const override { return "click lines"; }
  std::string order_key() const override;
  // Shuffled within shuffle_buffer lines when given a seed, else in file order.
  std::unique_ptr<BatchStream> batches(int64_t batch_size, std::optional<uint64_t> shuffle_seed,
                                       int64_t skip, Shard shard) const override;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  CriteoFormat format_;
  CriteoReadOptions options_;
  int64_t size_, shuffle_buffer_;
};

}  // namespace comera
