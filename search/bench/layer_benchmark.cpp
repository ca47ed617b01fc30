#include "search/bench/layer_benchmark.h"

#include "core/contract/merged_path.h"
#include "core/kernels/cpu/thin_gemm.h"
#include "core/kernels/cpu/thin_gemm_bf16.h"
#include "core/layers/tt_linear.h"
#include "core/util/accelerator.h"
#include "core/util/device.h"
#include "core/util/error.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/nn/modules/linear.h>

#include <nlohmann/json.hpp>

namespace comera {

namespace {

struct LayerCase {
  std::string name;
  std::vector<int64_t> in_modes, out_modes, ranks;
};

// The paper's three layer shapes and initial ranks (docs/method.md section 7).
const std::vector<LayerCase>& paper_layers() {
  static const std::vector<LayerCase> layers{
      {"attention 768->768", {12, 8, 8}, {8, 8, 12}, {1, 12, 30, 30, 30, 12, 1}},
      {"ffn in 768->3072", {12, 8, 8}, {12, 16, 16}, {1, 12, 30, 30, 30, 16, 1}},
      {"ffn out 3072->768", {16, 16, 12}, {8, 8, 12}, {1, 16, 30, 30, 30, 12, 1}},
  };
  return layers;
}

Timing time_step(const std::function<at::Tensor(const at::Tensor&)>& forward,
                 const std::vector<at::Tensor>& params, const at::Tensor& x, const at::Tensor& grad,
                 int warmup, int repeats, const c10::Device& device, Precision precision) {
  return time_median(
      [&](int) {
        for (auto p : params) p.mutable_grad() = at::Tensor();
        x.mutable_grad() = at::Tensor();
        const auto y = [&] {
          const ForwardPrecision scope(precision);
          return forward(x);
        }();
        y.backward(grad);
      },
      warmup, repeats, device);
}

}  // namespace

nlohmann::json LayerBenchmarkRow::to_json() const {
  return {{"layer", layer},
          {"shape", shape},
          {"tokens", tokens},
          {"threads", threads},
          {"kernels", kernels},
          {"precision", precision},
          {"device", device},
          {"dense_ms", dense.median_ms},
          {"tt_ms", tt.median_ms},
          {"dense_min_ms", dense.min_ms},
          {"tt_min_ms", tt.min_ms},
          {"speedup", speedup()},
          {"dense_macs", dense_macs},
          {"tt_macs", tt_macs},
          {"mac_ratio", mac_ratio()}};
}

std::vector<LayerBenchmarkRow> benchmark_layers(
    const LayerBenchmarkOptions& options,
    const std::function<void(const LayerBenchmarkRow&)>& on_row) {
  const int64_t B = options.tokens;
  if (B < 1) throw Error("layer benchmark: tokens must be >= 1, got " + std::to_string(B));
  const auto device = parse_device(options.device);
  require_device(device);
  require_precision(options.precision, device, "layer benchmark precision");
  const bool bf16 = options.precision == Precision::Bf16;
  at::manual_seed(0);
  std::vector<LayerBenchmarkRow> rows;
  for (const auto& c : paper_layers()) {
    TTLinear tt(TTLinearOptions(c.in_modes, c.out_modes, c.ranks));
    const int64_t in = tt->shape().in_features(), out = tt->shape().out_features();
    torch::nn::Linear dense(torch::nn::LinearOptions(in, out));
    tt->to(device);
    dense->to(device);
    auto x = at::randn({B, in}).to(device).requires_grad_();
    // The upstream gradient in the output's dtype, as a bf16 forward's next layer hands it back.
    auto grad = at::randn({B, out}).to(device).to(bf16 ? at::kBFloat16 : at::kFloat);
    LayerBenchmarkRow row;
    row.layer = c.name;
    row.shape = tt->shape().str();
    row.tokens = B;
    row.threads = at::get_num_threads();
    // A bf16 forward takes the kernels where the CPU has AVX512-BF16 (merged_path.cpp use_kernels).
    row.kernels = thin::enabled() && device.is_cpu() && (!bf16 || thin_bf16::enabled());
    row.precision = precision_name(options.precision);
    row.device = device_description(device);
    row.dense = time_step([&](const at::Tensor& v) { return dense->forward(v); },
                          dense->parameters(), x, grad, options.warmup, options.repeats, device,
                          options.precision);
    row.tt = time_step([&](const at::Tensor& v) { return tt->forward(v); }, tt->parameters(), x,
                       grad, options.warmup, options.repeats, device, options.precision);
    row.dense_macs = 3 * B * in * out;
    row.tt_macs = merged_path_macs(tt->chain().core_sizes(), tt->shape().ranks(), B, row.kernels);
    if (on_row) on_row(row);
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace comera
