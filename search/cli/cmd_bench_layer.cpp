// `comera bench layer`: forward+backward time of dense torch::nn::Linear against TTLinear for
// the paper's three layer shapes, side by side in one process (search/bench/layer_benchmark.h).
#include "search/bench/layer_benchmark.h"
#include "core/kernels/cpu/thin_gemm.h"
#include "core/kernels/cpu/thin_gemm_bf16.h"
#include "core/kernels/fast_kernels.h"
#include "core/util/blas_kernels.h"
#include "core/util/comma_list.h"
#include "core/util/device.h"
#include "core/util/error.h"
#include "search/cli/command.h"
#include "search/environment.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>

namespace comera::cli {
namespace {

// What runs a TT layer's batch products (core/contract/merged_path.cpp): without the bf16
// kernels, a bf16 forward of fewer than 2048 rows takes the float32 kernels.
const char* tt_kernels(bool cpu, bool bf16) {
  if (!cpu || !thin::enabled()) return "composite ATen path";
  if (!bf16) return "AVX-512 kernels";
  return thin_bf16::enabled() ? "AVX512-BF16 kernels"
                              : "composite ATen path, oneDNN bf16 (float32 kernels under 2048 rows)";
}

int run(int argc, char** argv) {
  auto options = make_options(
      "bench layer",
      "Forward+backward time of dense Linear vs TTLinear (paper layer shapes). The TT layer contracts\n"
      "by the merged path: plans stored by `comera tune` are not read (bench paths times every plan).");
  options.add_options()("tokens", "Tokens per batch (rows of X)",
                        cxxopts::value<int64_t>()->default_value("4096"))(
      "repeats", "Measured runs per layer (median reported)",
      cxxopts::value<int>()->default_value("15"))(
      "warmup", "Unmeasured runs first", cxxopts::value<int>()->default_value("3"))(
      "kernels", "Fast CPU kernels, AVX-512 thin GEMMs included (off: composite ATen path)",
      cxxopts::value<bool>()->default_value("true"))(
      "device", "Where to compute: cpu, cuda or cuda:N", cxxopts::value<std::string>()->default_value("cpu"))(
      "precision", "fp32, or bf16 (mixed precision, CPU only) for both layers' forward; a list "
      "(fp32,bf16) measures each in turn",
      cxxopts::value<std::string>()->default_value("fp32"))(
      "json", "Machine-readable output");
  auto parsed = parse(options, argc, argv);
  if (!parsed) return 0;
  const auto& r = *parsed;
  LayerBenchmarkOptions o;
  o.tokens = r["tokens"].as<int64_t>();
  o.repeats = repeats_flag(r);
  o.warmup = warmup_flag(r);
  o.device = r["device"].as<std::string>();
  std::vector<Precision> precisions;
  for (const auto& name : split_list(r["precision"].as<std::string>(), "--precision")) {
    precisions.push_back(parse_precision(name, "--precision"));
    require_precision(precisions.back(), parse_device(o.device), "--precision");
  }
  const bool json = r.count("json") > 0;
  const FastKernelsGuard kernels(r["kernels"].as<bool>());
  std::ostream& log = json ? std::cerr : std::cout;
  const bool cpu = o.device == "cpu";
  nlohmann::json rows = nlohmann::json::array();
  for (const auto precision : precisions) {
    o.precision = precision;
    const bool bf16 = precision == Precision::Bf16;
    log << "bench layer: " << o.tokens << " tokens on " << current_environment(o.device).describe()
        << ", median of " << o.repeats << " (after " << o.warmup << " warm-up), precision "
        << precision_name(precision) << ", TT layers by the merged path, TT batch GEMMs: "
        << tt_kernels(cpu, bf16) << ", dense GEMMs: "
        << (!cpu ? "the device's (cuBLAS)" : bf16 ? "oneDNN bf16" : blas_kernels().describe()) << "\n";
    benchmark_layers(o, [&](const LayerBenchmarkRow& row) {
      rows.push_back(row.to_json());
      rows.back()["blas"] = !cpu ? "cuBLAS" : bf16 ? "oneDNN bf16" : blas_kernels().describe();
      char line[320];
      std::snprintf(line, sizeof line,
                    "%-18s %-36s dense %7.2f ms (min %7.2f)  tt %6.2f ms (min %6.2f)  speedup "
                    "%5.2fx  MACs %.3gG vs %.3gG (%.1fx)\n",
                    row.layer.c_str(), row.shape.c_str(), row.dense.median_ms, row.dense.min_ms,
                    row.tt.median_ms, row.tt.min_ms, row.speedup(), row.dense_macs * 1e-9,
                    row.tt_macs * 1e-9, row.mac_ratio());
      log << line << std::flush;
    });
  }
  if (json) std::cout << rows.dump(2) << std::endl;
  return 0;
}

Register reg("bench layer", "Dense Linear vs TTLinear forward+backward time (paper shapes)", run);

}  // namespace
}  // namespace comera::cli
