#pragma once
// One training-style step of one layer, dense torch::nn::Linear against TTLinear, for the
// paper's three layer shapes side by side in one process: the numbers behind
// `comera bench layer`.
#include "core/util/precision.h"
#include "core/util/timing.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace comera {

struct LayerBenchmarkOptions {
  int64_t tokens = 4096;  // rows of X
  int warmup = 3, repeats = 15;
  std::string device = "cpu";  // "cpu", "cuda", "cuda:N"
  Precision precision = Precision::Fp32;  // of the forward (precision.h), for both layers
};

struct LayerBenchmarkRow {
  std::string layer;  // "attention 768->768"
  std::string shape;  // TTShape::str()
  int64_t tokens = 0;
  int threads = 0;
  bool kernels = false;  // the TT layer's AVX-512 thin-GEMM kernels (AVX512-BF16 ones in bf16) ran
  std::string precision;  // "fp32" or "bf16"
  std::string device;    // device_description() of where it ran
  Timing dense, tt;
  // Multiply-adds of forward+backward: dense 3·B·in·out; TT what the merged path does.
  int64_t dense_macs = 0, tt_macs = 0;
  double speedup() const { return dense.median_ms / tt.median_ms; }
  double mac_ratio() const { return static_cast<double>(dense_macs) / static_cast<double>(tt_macs); }
  nlohmann::json to_json() const;
};

// Gradients start unset, then forward and backward from one fixed random upstream gradient,
// for both layers of each shape; median of the repeats after warm-up. Whether the TT layer
// uses the thin-GEMM kernels is the caller's (a FastKernelsGuard, core/kernels/fast_kernels.h). on_row sees each row as it
// is measured.
std::vector<LayerBenchmarkRow> benchmark_layers(
    const LayerBenchmarkOptions& options,
    const std::function<void(const LayerBenchmarkRow&)>& on_row = {});

}  // namespace comera
