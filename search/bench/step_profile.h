#pragma once
// Where a training step's time goes (`comera bench step --profile`): wall time per part of the
// step (core/util/step_parts.h), forward and backward apart, the part's FLOPs as the model code
// counts them, and the machine's GEMM rate measured in the same process to compare against.
#include "core/util/precision.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace comera {

struct StepPartProfile {
  std::string part;
  double forward_ms = 0, backward_ms = 0;  // per step
  double ms = 0;                           // per step, forward and backward
  bool split = true;                       // false: only ms is known (the remainder)
  double flops = 0;                        // per step; 0 where not counted
};

struct StepProfile {
  int steps = 0;
  double step_ms = 0;      // mean wall time of the profiled steps
  double gemm_gflops = 0;  // a large square GEMM in this process, same threads and precision
  std::string gemm_precision = "fp32";
  // The step's parts, then "element-wise and other": the step minus the parts (LayerNorm, GELU,
  // dropout, loss, autograd's own work).
  std::vector<StepPartProfile> parts;
  // What of the rest could be named, per step, largest first: backward nodes that no part made
  // and ATen ops called outside every part and node (the loss, autograd summing gradients).
  std::vector<std::pair<std::string, double>> rest_by_name;
  nlohmann::json to_json() const;
};

// Runs step() `steps` times observing the parts (RecordFunction callbacks on the model code's
// scopes and on autograd's backward nodes, each node charged to the forward scope that made it).
StepProfile profile_steps(const std::function<void()>& step, int steps);

// GFLOP/s of an n x n by n x n matrix product in `precision` (bf16: bfloat16 operands, as a bf16
// step's matmuls run) at the current thread count, the best of `repeats` after one warm-up.
double measure_gemm_gflops(int64_t n = 2048, int repeats = 5, Precision precision = Precision::Fp32);

}  // namespace comera
