// `comera bench methods`: the paper's Figure 1 on this machine. Time per training step and peak
// memory of every training method (dense AdamW, CoMERA's tensorized model, GaLore, LTE, plain
// low-rank) at several batch sizes, each measurement in its own process so each peak is its
// own; one table, and with --plot both against batch size in one PNG.
#include "core/training/method.h"
#include "core/util/device.h"
#include "core/util/error.h"
#include "core/util/output_file.h"
#include "core/util/precision.h"
#include "search/bench/methods_plot.h"
#include "search/cli/bench_child.h"
#include "search/cli/command.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>

namespace comera::cli {
namespace {

int run(int argc, char** argv) {
  auto options = make_options(
      "bench methods",
      "The paper's Figure 1 on this machine: median time per full training step and peak memory\n"
      "of each training method at each batch size, on random tokens (docs/baselines.md). Methods:\n"
      "dense (AdamW), tt (the experiment's tensorized model), galore, lte, lowrank; their ranks\n"
      "come from the experiment's method_settings or --method-settings. Memory is the peak of\n"
      "live LibTorch CPU tensors (parameters, gradients, optimiser state, activations).");
  options.add_options()("config", "Experiment file",
                        cxxopts::value<std::string>()->default_value("experiments/mnli_six_encoder.json"))(
      "methods", "Methods to measure", cxxopts::value<std::string>()->default_value("dense,tt,galore,lte,lowrank"))(
      "batches", "Batch sizes", cxxopts::value<std::string>()->default_value("1,32,64,128"))(
      "seq", "Tokens per sequence", cxxopts::value<int64_t>()->default_value("128"))(
      "method-settings", "JSON object replacing the experiment's method_settings",
      cxxopts::value<std::string>()->default_value(""))(
      "device", "Where to compute: cpu, cuda or cuda:N", cxxopts::value<std::string>()->default_value("cpu"))(
      "precision", "fp32, or bf16 (mixed precision, CPU only) for every method",
      cxxopts::value<std::string>()->default_value("fp32"))(
      "warmup", "Unmeasured steps first", cxxopts::value<int>()->default_value("2"))(
      "repeats", "Measured steps", cxxopts::value<int>()->default_value("5"))(
      "plot", "Draw time and memory against batch size into this PNG (gnuplot)",
      cxxopts::value<std::string>()->default_value(""))(
      "json", "Machine-readable output");
  auto parsed = parse(options, argc, argv);
  if (!parsed) return 0;
  const auto& r = *parsed;
  const auto methods = string_list_flag(r, "methods");
  for (const auto& m : methods)
    if (std::find(method_names().begin(), method_names().end(), m) == method_names().end())
      throw Error("--methods: unknown method '" + m + "' (use dense, tt, galore, lte, lowrank)");
  const auto batches = int_list_flag(r, "batches", 1);
  const auto config = config_flag(r);
  std::optional<OutputFile> plot;
  if (!r["plot"].as<std::string>().empty()) plot.emplace(r["plot"].as<std::string>(), "--plot", std::vector<std::string>{config});
  warmup_flag(r);
  repeats_flag(r);
  if (r["seq"].as<int64_t>() < 1) throw Error("--seq must be at least 1");
  const auto precision = r["precision"].as<std::string>();
  require_precision(parse_precision(precision, "--precision"), parse_device(r["device"].as<std::string>()),
                    "--precision");
  // Each method's experiment, so a bad config or --method-settings is refused before any child.
  for (const auto& method : methods)
    bench_step_experiment(config, method, r["method-settings"].as<std::string>(), false, r["device"].as<std::string>());
  std::vector<std::string> common{"--config", config, "--seq", std::to_string(r["seq"].as<int64_t>()),
                                  "--warmup", std::to_string(r["warmup"].as<int>()),
                                  "--repeats", std::to_string(r["repeats"].as<int>()),
                                  "--threads", std::to_string(r["threads"].as<int>()),
                                  "--device", r["device"].as<std::string>(), "--precision", precision};
  if (!r["method-settings"].as<std::string>().empty())
    common.insert(common.end(), {"--method-settings", r["method-settings"].as<std::string>()});

  nlohmann::json rows = nlohmann::json::array();
  std::vector<MethodPoint> points;
  // Batch by batch, every method in turn: each ratio against tt divides measurements taken one
  // after the other, not a sweep of every batch apart.
  for (const auto batch : batches)
    for (const auto& method : methods) {
      std::cerr << "batch " << batch << ": " << method << "..." << std::endl;
      auto flags = common;
      flags.insert(flags.end(), {"--method", method, "--batch", std::to_string(batch)});
      auto row = bench_step_in_child(flags);
      row["method"] = method;
      points.push_back({method, static_cast<double>(batch), row["median_ms"].get<double>(),
                        row["peak_tensor_mb"].get<double>()});
      rows.push_back(row);
    }
  // Ratios against the tensorized model at the same batch, when it was measured.
  for (auto& row : rows)
    for (const auto& tt : rows)
      if (tt["method"] == "tt" && tt["batch"] == row["batch"]) {
        row["time_vs_tt"] = row["median_ms"].get<double>() / tt["median_ms"].get<double>();
        row["memory_vs_tt"] = row["peak_tensor_mb"].get<double>() /
                              std::max(1e-9, tt["peak_tensor_mb"].get<double>());
      }
  if (plot)
    plot->write([&](const std::string& temp) {
      write_methods_png(points, "Training methods: " + std::filesystem::path(config).stem().string() +
                                    ", sequence " + std::to_string(r["seq"].as<int64_t>()) +
                                    " (synthetic tokens)",
                        temp);
    });
  if (r.count("json")) {
    std::cout << rows.dump(2) << std::endl;
    return 0;
  }
  std::printf("Synthetic tokens, sequence %lld, %s, %s, %d threads; dense GEMMs: %s.\n\n",
              static_cast<long long>(r["seq"].as<int64_t>()), rows[0]["device_description"].get<std::string>().c_str(),
              precision.c_str(), rows[0]["threads"].get<int>(), rows[0]["blas"].get<std::string>().c_str());
  auto ratio = [](const nlohmann::json& row, const char* key) {
    if (!row.contains(key)) return std::string();
    char text[32];
    std::snprintf(text, sizeof text, "%.2fx", row[key].get<double>());
    return std::string(text);
  };
  std::printf("| method | batch | ms/step | peak tensors MB | peak RSS MB | parameters | time / tt | memory / tt |\n"
              "|---|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const auto& row : rows)
    std::printf("| %s | %lld | %.1f | %.2f | %.1f | %lld | %s | %s |\n",
                row["method"].get<std::string>().c_str(), static_cast<long long>(row["batch"].get<int64_t>()),
                row["median_ms"].get<double>(), row["peak_tensor_mb"].get<double>(),
                row["peak_mem_mb"].get<double>(), static_cast<long long>(row["params"].get<int64_t>()),
                ratio(row, "time_vs_tt").c_str(), ratio(row, "memory_vs_tt").c_str());
  if (plot) std::cerr << "wrote " << plot->path() << std::endl;
  return 0;
}

Register reg("bench methods", "The paper's Figure 1: step time and memory of every training method by batch",
             run);

}  // namespace
}  // namespace comera::cli
