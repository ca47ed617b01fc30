#pragma once
// Times full training steps (forward, loss with the size terms, backward, optimiser step) of
// an experiment's model and task on random inputs (Task::synthetic_batch) on the training
// device, and its peak memory: the numbers behind `comera bench step` and the tensorized-vs-
// dense tables in docs/.
#include "core/models/model_kind.h"
#include "core/training/train_config.h"
#include "core/util/timing.h"
#include "search/bench/step_profile.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace comera {

class DataParallel;

struct StepBenchmarkOptions {
  int64_t batch = 8;
  int64_t length = 128;
  int warmup = 2, repeats = 5;
  uint64_t seed = 0;
  bool profile = false;  // then also `repeats` profiled steps and the GEMM rate
  // Data-parallel: this process is one rank; it steps on its batch / ranks share of the batch.
  DataParallel* parallel = nullptr;
};

struct StepBenchmarkResult {
  Timing timing;
  // On the CPU: peak RSS, and peak bytes of live LibTorch CPU tensors, above what they were
  // before the model was built. On a GPU: the caching allocator's peaks of memory reserved and
  // of tensors allocated (max_memory_reserved, max_memory_allocated) above the same point.
  double peak_mem_mb = 0;
  double peak_tensor_mb = 0;
  std::string device;  // device_description(): "cpu", or the GPU's name and CUDA versions
  int64_t params = 0, dense_params = 0;
  int64_t tokens = 0;      // per step
  std::optional<StepProfile> profile;
  // Data-parallel only (ranks > 1), medians per step: the gradient all-reduce's transfer, the
  // wait before it for the slowest rank (a timed barrier), and its bytes.
  int ranks = 1;
  double all_reduce_ms = 0, wait_ms = 0;
  int64_t all_reduce_bytes = 0;
  double tokens_per_s() const;
  nlohmann::json to_json() const;
};

// Builds the model and optimiser inside, so the peak covers parameters, gradients, optimiser
// state and activations; memory the heap kept from earlier work is handed back first.
StepBenchmarkResult benchmark_step(const ModelSpec& model, const TrainConfig& training,
                                   const StepBenchmarkOptions& options);

}  // namespace comera
