#pragma once
// Data-parallel training on c10d (DDP's recipe): rank 0's parameters broadcast at the start,
// each rank trains on its shard of every global batch, and the gradients are summed over the
// ranks in flat buckets after backward, before clipping and the optimiser step. Each rank's
// gradient is weighted by its share of the batch's predictions, so W ranks with B/W examples
// each take the same step as one rank with B (also when shards hold unequal numbers of masked
// tokens), and every rank's parameters stay identical without further communication.
#include "core/distributed/collective.h"
#include "core/distributed/gradient_buckets.h"
#include "core/distributed/world.h"

#include <chrono>
#include <memory>
#include <vector>

namespace torch::nn {
class Module;
}

namespace comera {

class DataParallel {
 public:
  DataParallel(const World& world, std::chrono::milliseconds timeout);

  const World& world() const { return collective_.world(); }
  int rank() const { return world().rank; }
  int size() const { return world().size; }

  // Rank 0's parameters and buffers into every rank's model (same structure and shapes).
  void broadcast(torch::nn::Module& model);
  // Throws when the ranks disagree on `values` (e.g. step and parameter shapes after a resume).
  void require_same(const std::vector<int64_t>& values, const std::string& what);
  // Element-wise sums over the ranks.
  std::vector<double> sum(const std::vector<double>& values);
  // See GradientBuckets::reduce.
  void reduce_gradients(const std::vector<at::Tensor>& params, double weight);
  at::Tensor gather(const at::Tensor& tensor) { return collective_.all_gather(tensor); }
  void barrier() { collective_.barrier(); }

  const CommStats& stats() const { return collective_.stats(); }
  // Gradient bytes all-reduced in the last step, and their share of stats().
  int64_t gradient_bytes() const { return gradient_bytes_; }
  double gradient_seconds() const { return gradient_seconds_; }

  // For benchmarks: a timed barrier before each gradient all-reduce. A blocking all-reduce also
  // waits for the slowest rank to finish backward; this way gradient_seconds() is the transfer
  // alone and the wait is counted apart.
  void time_waits(bool on) { time_waits_ = on; }
  double wait_seconds() const { return wait_seconds_; }

 private:
  Collective collective_;
  GradientBuckets buckets_;
  int64_t gradient_bytes_ = 0;
  double gradient_seconds_ = 0;
  bool time_waits_ = false;
  double wait_seconds_ = 0;
};

}  // namespace comera
