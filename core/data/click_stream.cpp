#include "core/data/click_stream.h"

#include "core/util/error.h"

#include <numeric>

namespace comera {

namespace {

class ClickBatches : public BatchStream {
 public:
  ClickBatches(const std::string& path, const CriteoFormat& format, const CriteoReadOptions& options,
               int64_t batch_size, int64_t limit, int64_t skip, Shard shard)
      : reader_(path, format, options), format_(format), batch_size_(batch_size), left_(limit),
        shard_(shard) {
    ClickLine line;
    for (int64_t i = 0; i < skip * batch_size_ && left_ > 0 && reader_.next(line); ++i) --left_;
  }

  bool next(Batch& out) override {
    // The lines go through a small ClickDataset: its batches are the in-memory path's.
    ClickDataset chunk(format_);
    ClickLine line;
    while (chunk.size() < batch_size_ && left_ > 0 && reader_.next(line)) {
      chunk.add(line);
      --left_;
    }
    if (chunk.size() == 0) return false;
    // Every rank reads the whole batch (the file's order) and keeps its shard.
    const auto [begin, end] = shard_.range(chunk.size());
    std::vector<int64_t> mine(static_cast<size_t>(end - begin));
    std::iota(mine.begin(), mine.end(), begin);
    out = chunk.batch(mine);
    return true;
  }

 private:
  CriteoReader reader_;
  const CriteoFormat& format_;
  int64_t batch_size_, left_;
  Shard shard_;
};

}  // namespace

ClickStreamDataset::ClickStreamDataset(std::string path, CriteoFormat format, CriteoReadOptions options,
                                       int64_t lines, int64_t shuffle_buffer, int64_t limit)
    : path_(std::move(path)), format_(std::move(format)), options_(options),
      size_(limit > 0 ? std::min(limit, lines) : lines), shuffle_buffer_(shuffle_buffer) {
  check_click_ids(format_);
}

std::string ClickStreamDataset::order_key() const {
  return Dataset::order_key() + ", shuffle buffer " + std::to_string(shuffle_buffer_) + " lines";
}

Batch ClickStreamDataset::batch(const std::vector<int64_t>& indices) const {
  (void)indices;
  throw Error(path_ + ": a streamed click log is read in order, not by index (read it through "
              "batches(), or load it into memory with data.criteo.stream false)");
}

std::unique_ptr<BatchStream> ClickStreamDataset::batches(int64_t batch_size,
                                                         std::optional<uint64_t> shuffle_seed,
                                                         int64_t skip, Shard shard) const {
  if (batch_size < 1)
    throw Error("batch size " + std::to_string(batch_size) + " must be at least 1");
  auto options = options_;
  options.shuffle_buffer = shuffle_seed ? shuffle_buffer_ : 0;
  options.seed = shuffle_seed.value_or(0);
  return std::make_unique<ClickBatches>(path_, format_, options, batch_size, size_,
                                        std::max<int64_t>(0, skip), shard);
}

}  // namespace comera
