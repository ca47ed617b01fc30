#pragma once
// What the trainer reads: a dataset of examples that makes batches of any subset, and the
// order of one epoch's batches. Pair text, single text, masked-LM token streams and click logs
// each implement it.
#include "core/data/batch.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace comera {

class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual int64_t size() const = 0;
  // The examples at `indices`, on the CPU.
  virtual Batch batch(const std::vector<int64_t>& indices) const = 0;
  // What one example is, for messages ("pairs", "click lines").
  virtual std::string unit() const = 0;

  // The index lists of one epoch's batches: in order, or shuffled by `shuffle_seed` (the same
  // seed gives the same order on every machine; vary it per epoch). The last batch is short
  // unless drop_last.
  std::vector<std::vector<int64_t>> epoch(int64_t batch_size,
                                          std::optional<uint64_t> shuffle_seed = std::nullopt,
                                          bool drop_last = false) const;
};

}  // namespace comera
