// `comera bench layer`: forward+backward time of dense torch::nn::Linear against TTLinear for
// the paper's three layer shapes, side by side in one process.
#include "core/contract/merged_path.h"
#include "core/kernels/cpu/thin_gemm.h"
#include "core/kernels/fast_kernels.h"
#include "core/layers/tt_linear.h"
#include "core/util/error.h"
#include "core/util/timing.h"
#include "search/cli/command.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/nn/modules/linear.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <functional>
#include <iostream>

namespace comera::cli {
namespace {

struct LayerCase {
  std::string name;
  std::vector<int64_t> in_modes, out_modes, ranks;
};

const std::vector<LayerCase>& paper_layers() {
  static const std::vector<LayerCase> layers{
      {"attention 768->768", {12, 8, 8}, {8, 8, 12}, {1, 12, 30, 30, 30, 12, 1}},
      {"ffn in 768->3072", {12, 8, 8}, {12, 16, 16}, {1, 12, 30, 30, 30, 16, 1}},
      {"ffn out 3072->768", {16, 16, 12}, {8, 8, 12}, {1, 16, 30, 30, 30, 12, 1}},
  };
  return layers;
}

// One training-style step: gradients start unset (zero_grad(set_to_none)), forward, then
// backward from the fixed upstream gradient.
Timing time_step(const std::function<at::Tensor(const at::Tensor&)>& forward,
                 const std::vector<at::Tensor>& params, const at::Tensor& x, const at::Tensor& grad,
                 int warmup, int repeats) {
  return time_median(
      [&](int) {
        for (auto p : params) p.mutable_grad() = at::Tensor();
        x.mutable_grad() = at::Tensor();
        forward(x).backward(grad);
      },
      warmup, repeats);
}

int run(int argc, char** argv) {
  auto options = make_options(
      "bench layer", "Forward+backward time of dense Linear vs TTLinear (paper layer shapes)");
  options.add_options()("tokens", "Tokens per batch (rows of X)",
                        cxxopts::value<int64_t>()->default_value("4096"))(
      "repeats", "Measured runs per layer (median reported)",
      cxxopts::value<int>()->default_value("15"))(
      "warmup", "Unmeasured runs first", cxxopts::value<int>()->default_value("3"))(
      "kernels", "Fast CPU kernels, AVX-512 thin GEMMs included (off: composite ATen path)",
      cxxopts::value<bool>()->default_value("true"))("json", "Machine-readable output");
  auto parsed = parse(options, argc, argv);
  if (!parsed) return 0;
  const auto& r = *parsed;
  const int64_t B = r["tokens"].as<int64_t>();
  const int repeats = r["repeats"].as<int>(), warmup = r["warmup"].as<int>();
  if (B < 1) throw Error("--tokens must be >= 1");
  const bool json = r.count("json") > 0;
  set_fast_kernels(r["kernels"].as<bool>());
  std::ostream& log = json ? std::cerr : std::cout;
  log << "bench layer: " << B << " tokens, " << at::get_num_threads() << " threads, median of "
      << repeats << " (after " << warmup << " warm-up), TT batch GEMMs: "
      << (thin::enabled() ? "AVX-512 kernels" : "composite ATen path") << "\n";

  at::manual_seed(0);
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& c : paper_layers()) {
    TTLinear tt(TTLinearOptions(c.in_modes, c.out_modes, c.ranks));
    const int64_t in = tt->shape().in_features(), out = tt->shape().out_features();
    torch::nn::Linear dense(torch::nn::LinearOptions(in, out));
    auto x = at::randn({B, in}).requires_grad_();
    auto grad = at::randn({B, out});
    auto dense_t = time_step([&](const at::Tensor& v) { return dense->forward(v); },
                             dense->parameters(), x, grad, warmup, repeats);
    auto tt_t = time_step([&](const at::Tensor& v) { return tt->forward(v); }, tt->parameters(),
                          x, grad, warmup, repeats);
    const int64_t dense_macs = 3 * B * in * out;
    const int64_t tt_macs = merged_path_macs(tt->chain().core_sizes(), tt->shape().ranks(), B,
                                            thin::enabled());
    nlohmann::json row{{"layer", c.name},
                       {"shape", tt->shape().str()},
                       {"tokens", B},
                       {"threads", at::get_num_threads()},
                       {"kernels", thin::enabled()},
                       {"dense_ms", dense_t.median_ms},
                       {"tt_ms", tt_t.median_ms},
                       {"dense_min_ms", dense_t.min_ms},
                       {"tt_min_ms", tt_t.min_ms},
                       {"speedup", dense_t.median_ms / tt_t.median_ms},
                       {"dense_macs", dense_macs},
                       {"tt_macs", tt_macs},
                       {"mac_ratio", static_cast<double>(dense_macs) / static_cast<double>(tt_macs)}};
    rows.push_back(row);
    char line[320];
    std::snprintf(line, sizeof line,
                  "%-18s %-36s dense %7.2f ms (min %7.2f)  tt %6.2f ms (min %6.2f)  speedup "
                  "%5.2fx  MACs %.3gG vs %.3gG (%.1fx)\n",
                  c.name.c_str(), tt->shape().str().c_str(), dense_t.median_ms, dense_t.min_ms,
                  tt_t.median_ms, tt_t.min_ms, dense_t.median_ms / tt_t.median_ms,
                  dense_macs * 1e-9, tt_macs * 1e-9, row["mac_ratio"].get<double>());
    log << line << std::flush;
  }
  if (json) std::cout << rows.dump(2) << std::endl;
  return 0;
}

Register reg("bench layer", "Dense Linear vs TTLinear forward+backward time (paper shapes)", run);

}  // namespace
}  // namespace comera::cli
