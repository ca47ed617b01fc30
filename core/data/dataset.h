#pragma once
// What the trainer reads: a dataset of examples that makes batches of any subset, and the
// order of one epoch's batches. Pair text, single text, masked-LM token streams and click logs
// each implement it; a dataset too large for memory (click logs read from their file) gives
// its epochs' batches as a stream instead.
#include "core/data/batch.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace comera {

// One epoch's batches, read one after the other.
class BatchStream {
 public:
  virtual ~BatchStream() = default;
  // The next batch, on the CPU; false at the end of the epoch.
  virtual bool next(Batch& out) = 0;
};

// Which part of every batch a data-parallel rank reads: of a batch of n examples, rank r of W
// takes the contiguous n*r/W .. n*(r+1)/W (so all W shards together are the batch, in order).
struct Shard {
  int rank = 0, count = 1;
  // The [begin, end) of this shard in a batch of n examples.
  std::pair<int64_t, int64_t> range(int64_t n) const {
    return {n * rank / count, n * (rank + 1) / count};
  }
};

class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual int64_t size() const = 0;
  // The examples at `indices`, on the CPU.
  virtual Batch batch(const std::vector<int64_t>& indices) const = 0;
  // What one example is, for messages ("pairs", "click lines").
  virtual std::string unit() const = 0;
  // What fixes the order of an epoch's batches besides the seed and the batch size, in words
  // ("65692 texts"): a resumed run must find it unchanged to go on where it stopped.
  virtual std::string order_key() const;

  // The index lists of one epoch's batches: in order, or shuffled by `shuffle_seed` (the same
  // seed gives the same order on every machine; vary it per epoch). The last batch is short
  // unless drop_last.
  std::vector<std::vector<int64_t>> epoch(int64_t batch_size,
                                          std::optional<uint64_t> shuffle_seed = std::nullopt,
                                          bool drop_last = false) const;

  // One epoch's batches (the last one short), from the `skip`-th on: where a resumed run goes
  // on; each of them cut to `shard` (data-parallel ranks: every rank steps through the same
  // global batches). By default epoch()'s batches; a streamed dataset reads its own order from
  // its file, the same for the same seed, in at most ceil(size() / batch_size) batches.
  virtual std::unique_ptr<BatchStream> batches(int64_t batch_size,
                                               std::optional<uint64_t> shuffle_seed = std::nullopt,
                                               int64_t skip = 0, Shard shard = {}) const;
};

}  // namespace comera
