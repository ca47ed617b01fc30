// `comera bench step`: median time and peak memory of a full training step, tensorized or dense
// or under a baseline method (--method), or both builds side by side at several batch sizes
// (--compare).
#include "core/training/experiment.h"
#include "core/util/blas_kernels.h"
#include "core/util/comma_list.h"
#include "core/util/precision.h"
#include "search/bench/step_benchmark.h"
#include "core/util/device.h"
#include "core/util/error.h"
#include "search/cli/bench_child.h"
#include "search/cli/command.h"
#include "search/cli/rank_launcher.h"
#include "core/distributed/data_parallel.h"
#include "core/distributed/world.h"
#include "core/util/threads.h"

#include <ATen/Parallel.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <memory>
#include <iostream>

namespace comera::cli {
namespace {

// The --profile table of one build, from its JSON.
void print_profile(const std::string& title, const nlohmann::json& profile) {
  const double gemm = profile["gemm_gflops"].get<double>();
  std::printf("\n%s: %.1f ms/step (mean of %d profiled steps); large %s GEMM here: %.0f GFLOP/s\n\n"
              "| part | forward ms | backward ms | ms/step | share | GFLOP | GFLOP/s | of GEMM rate |\n"
              "|---|---:|---:|---:|---:|---:|---:|---:|\n",
              title.c_str(), profile["step_ms"].get<double>(), profile["steps"].get<int>(),
              profile.value("gemm_precision", std::string("fp32")).c_str(), gemm);
  const auto cell = [](const nlohmann::json& row, const char* key, const char* format, double scale) {
    char text[32] = "-";
    if (row.contains(key)) std::snprintf(text, sizeof text, format, scale * row[key].get<double>());
    return std::string(text);
  };
  for (const auto& row : profile["parts"])
    std::printf("| %s | %s | %s | %.1f | %.1f%% | %s | %s | %s |\n", row["part"].get<std::string>().c_str(),
                cell(row, "forward_ms", "%.1f", 1).c_str(), cell(row, "backward_ms", "%.1f", 1).c_str(),
                row["ms"].get<double>(), 100 * row["share"].get<double>(), cell(row, "gflop", row.value("gflop", 0.0) >= 100 ? "%.0f" : "%.3g", 1).c_str(),
                cell(row, "gflops", "%.0f", 1).c_str(), cell(row, "of_gemm_rate", "%.0f%%", 100).c_str());
  // The largest named pieces of the rest (all of them are in --json).
  const auto rest = profile.value("rest_by_name", nlohmann::json::array());
  if (rest.empty()) return;
  std::printf("\nof the rest, by name (ms/step):");
  for (size_t i = 0; i < rest.size() && i < 8; ++i)
    std::printf("%s %s %.1f", i ? "," : "", rest[i]["name"].get<std::string>().c_str(), rest[i]["ms"].get<double>());
  std::printf("\n");
}

// Each precision of --precision, checked before any child starts.
std::vector<std::string> precisions_flag(const cxxopts::ParseResult& r, const std::string& device) {
  auto names = split_list(r["precision"].as<std::string>(), "--precision");
  for (const auto& name : names)
    require_precision(parse_precision(name, "--precision"), parse_device(device), "--precision");
  return names;
}

// Lengths and counts every measurement needs, checked before any child starts.
void require_step_counts(const cxxopts::ParseResult& r) {
  warmup_flag(r);
  repeats_flag(r);
  if (r["seq"].as<int64_t>() < 1) throw Error("--seq " + std::to_string(r["seq"].as<int64_t>()) + ": give at least 1 token");
}

int compare(const cxxopts::ParseResult& r) {
  refuse_beside(r, "compare", {"batch", "method", "method-settings", "nproc", "dense"},
                "measures the tensorized and dense builds at each of --batches");
  const auto device = r["device"].as<std::string>();
  const auto precisions = precisions_flag(r, device);
  require_step_counts(r);
  const auto batches = int_list_flag(r, "batches", 1);
  const auto file = config_flag(r);
  for (const bool dense : {false, true}) bench_step_experiment(file, "", "", dense, device);
  std::vector<std::string> common{
      "--config", file, "--seq", std::to_string(r["seq"].as<int64_t>()),
      "--warmup", std::to_string(r["warmup"].as<int>()), "--repeats", std::to_string(r["repeats"].as<int>()),
      "--threads", std::to_string(r["threads"].as<int>()), "--device", device};
  if (r.count("profile")) common.push_back("--profile");
  nlohmann::json rows = nlohmann::json::array();
  for (const auto batch : batches)
    for (const auto& precision : precisions) {
      auto args = common;
      args.insert(args.end(), {"--batch", std::to_string(batch), "--precision", precision});
      std::cerr << "batch " << batch << ", " << precision << ": tensorized..." << std::endl;
      const auto tt = bench_step_in_child(args);
      std::cerr << "batch " << batch << ", " << precision << ": dense..." << std::endl;
      args.push_back("--dense");
      const auto dense = bench_step_in_child(args);
      rows.push_back({{"batch", batch}, {"precision", precision}, {"tensorized", tt}, {"dense", dense},
                      {"speedup", dense["median_ms"].get<double>() / tt["median_ms"].get<double>()},
                      {"cpu_speedup",
                       dense["cpu_median_ms"].get<double>() / tt["cpu_median_ms"].get<double>()},
                      {"memory_ratio",
                       dense["peak_mem_mb"].get<double>() / std::max(1e-9, tt["peak_mem_mb"].get<double>())}});
    }
  // Each precision against the first, same batch: the builds' times and peaks side by side.
  nlohmann::json against = nlohmann::json::array();
  for (const auto& row : rows)
    for (const auto& base : rows)
      if (base["batch"] == row["batch"] && base["precision"] == precisions.front() &&
          row["precision"] != precisions.front()) {
        const auto ratio = [&](const char* build, const char* key) {
          return base[build][key].get<double>() / std::max(1e-9, row[build][key].get<double>());
        };
        against.push_back({{"batch", row["batch"]}, {"precision", row["precision"]},
                           {"against", precisions.front()},
                           {"tensorized_speedup", ratio("tensorized", "median_ms")},
                           {"dense_speedup", ratio("dense", "median_ms")},
                           {"tensorized_memory_ratio", ratio("tensorized", "peak_mem_mb")},
                           {"dense_memory_ratio", ratio("dense", "peak_mem_mb")},
                           // The first precision's tensorized step against this one's dense.
                           {"first_tensorized_vs_dense",
                            row["dense"]["median_ms"].get<double>() / base["tensorized"]["median_ms"].get<double>()}});
      }
  if (r.count("json")) {
    std::cout << (precisions.size() > 1 ? nlohmann::json{{"rows", rows}, {"precisions", against}} : rows).dump(2)
              << std::endl;
    return 0;
  }
  std::printf("| batch | precision | tensorized ms/step | dense ms/step | speed-up | tensorized CPU ms | dense CPU ms | CPU speed-up | tensorized peak MB | dense peak MB | memory ratio |\n"
              "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const auto& row : rows)
    std::printf("| %lld | %s | %.0f | %.0f | %.1fx | %.0f | %.0f | %.1fx | %.0f | %.0f | %.1fx |\n",
                static_cast<long long>(row["batch"].get<int64_t>()), row["precision"].get<std::string>().c_str(),
                row["tensorized"]["median_ms"].get<double>(), row["dense"]["median_ms"].get<double>(),
                row["speedup"].get<double>(), row["tensorized"]["cpu_median_ms"].get<double>(),
                row["dense"]["cpu_median_ms"].get<double>(), row["cpu_speedup"].get<double>(),
                row["tensorized"]["peak_mem_mb"].get<double>(),
                row["dense"]["peak_mem_mb"].get<double>(), row["memory_ratio"].get<double>());
  if (!against.empty()) {
    const auto first = precisions.front();
    std::printf("\nAgainst %s at the same batch (times and peaks of %s over the other's):\n\n"
                "| batch | precision | tensorized speed-up | dense speed-up | tensorized memory ratio | dense memory ratio | tensorized in %s vs dense in this |\n"
                "|---:|---|---:|---:|---:|---:|---:|\n", first.c_str(), first.c_str(), first.c_str());
    for (const auto& a : against)
      std::printf("| %lld | %s | %.2fx | %.2fx | %.2fx | %.2fx | %.1fx |\n",
                  static_cast<long long>(a["batch"].get<int64_t>()), a["precision"].get<std::string>().c_str(),
                  a["tensorized_speedup"].get<double>(), a["dense_speedup"].get<double>(),
                  a["tensorized_memory_ratio"].get<double>(), a["dense_memory_ratio"].get<double>(),
                  a["first_tensorized_vs_dense"].get<double>());
  }
  if (!rows.empty())
    std::printf("\nMeasured on %s, %d threads; dense GEMMs: %s\n",
                rows[0]["tensorized"]["device_description"].get<std::string>().c_str(),
                rows[0]["tensorized"]["threads"].get<int>(), rows[0]["tensorized"]["blas"].get<std::string>().c_str());
  for (const auto& row : rows)
    for (const char* build : {"tensorized", "dense"})
      if (row[build].contains("profile"))
        print_profile(std::string(build) + ", " + row["precision"].get<std::string>() + ", batch " +
                          std::to_string(row["batch"].get<int64_t>()),
                      row[build]["profile"]);
  return 0;
}

int run(int argc, char** argv) {
  auto options = make_options(
      "bench step",
      "Median wall and process CPU time and peak memory (process RSS above the idle baseline) of one full\n"
      "training step (forward, loss with the size terms, backward, optimiser step) of the\n"
      "experiment's model and task on random inputs. --dense builds every layer dense (as train\n"
      "--dense), --method trains under a baseline (dense, tt, galore, lte, lowrank); --compare\n"
      "measures the tensorized and dense builds at each of --batches, each in its own process, and\n"
      "prints a table. TT layers contract by the merged path: the plans `comera tune` stores, which\n"
      "train uses by default, are not read.");
  options.add_options()("config", "Experiment file",
                        cxxopts::value<std::string>()->default_value("experiments/mnli_six_encoder.json"))(
      "batch", "Sequences per step", cxxopts::value<int64_t>()->default_value("8"))(
      "seq", "Tokens per sequence", cxxopts::value<int64_t>()->default_value("128"))(
      "dense", "Build every layer dense")(
      "method", "Train under this method: dense, tt, galore, lte or lowrank (docs/baselines.md)",
      cxxopts::value<std::string>()->default_value(""))(
      "method-settings", "JSON object replacing the experiment's method_settings, e.g. "
      "'{\"galore\": {\"rank\": 256}}'",
      cxxopts::value<std::string>()->default_value(""))(
      "device", "Where to compute: cpu, cuda or cuda:N",
      cxxopts::value<std::string>()->default_value("cpu"))(
      "precision", "fp32 or bf16 (mixed precision, CPU only); with --compare a list, e.g. fp32,bf16, "
      "each measured and the ratios printed",
      cxxopts::value<std::string>()->default_value("fp32"))(
      "compare", "Tensorized vs dense at each of --batches")(
      "batches", "Batch sizes for --compare", cxxopts::value<std::string>()->default_value("1,8,32"))(
      "warmup", "Unmeasured steps first", cxxopts::value<int>()->default_value("2"))(
      "repeats", "Measured steps", cxxopts::value<int>()->default_value("5"))(
      "profile", "Then as many steps again, timed per part (linear layers, attention, embedding, "
      "residual adds with layer norms, GELU, size terms, optimiser, the rest) with FLOPs and GFLOP/s beside this "
      "machine's GEMM rate")(
      "nproc", "Data-parallel ranks on this host (c10d Gloo on 127.0.0.1), each stepping on its "
      "share of --batch (at least one sequence each) with --threads threads; rank 0 reports, with "
      "the gradient all-reduce's time and bytes and the wait for the slowest rank before it", cxxopts::value<int>()->default_value("1"))(
      "json", "Machine-readable output");
  auto parsed = parse(options, argc, argv);
  if (!parsed) return 0;
  const auto& r = *parsed;
  if (r.count("compare")) return compare(r);
  if (r.count("batches"))
    throw Error("--batches goes with --compare; without it one batch size is measured (give --batch N, or "
                "add --compare)");
  const int nproc = r["nproc"].as<int>();
  if (nproc < 1) throw Error("--nproc " + std::to_string(nproc) + ": give at least 1");
  StepBenchmarkOptions o;
  o.batch = r["batch"].as<int64_t>();
  o.length = r["seq"].as<int64_t>();
  o.warmup = warmup_flag(r);
  o.repeats = repeats_flag(r);
  o.profile = r.count("profile") > 0;
  if (o.batch < 1 || o.length < 1) throw Error("--batch and --seq must be at least 1");
  if (o.batch < nproc)
    throw Error("--batch " + std::to_string(o.batch) + " is below --nproc " + std::to_string(nproc) +
                ": every rank steps on at least one sequence (give --batch " + std::to_string(nproc) +
                " or more, or fewer ranks)");
  const bool dense = r.count("dense") > 0;
  const auto file = config_flag(r);
  auto e = bench_step_experiment(file, r["method"].as<std::string>(), r["method-settings"].as<std::string>(), dense,
                                 r["device"].as<std::string>());
  e.training.precision = parse_precision(r["precision"].as<std::string>(), "--precision");
  require_precision(e.training.precision, parse_device(e.training.device), "--precision");
  const auto world = world_from(process_environment());
  if (!world && nproc > 1) {
    LaunchOptions launch;
    launch.argv = {argv[0], "bench", "step"};
    launch.argv.insert(launch.argv.end(), argv + 1, argv + argc);
    launch.nproc = nproc;
    const int asked = r["threads"].as<int>();
    launch.threads_per_rank = asked > 0 ? asked : std::max(1, available_cores() / nproc);
    launch.say = [](const std::string& text) { std::cerr << text << std::endl; };
    return launch_local_ranks(launch);
  }
  std::unique_ptr<DataParallel> parallel;
  if (world) parallel = std::make_unique<DataParallel>(*world, std::chrono::seconds(300));
  const bool root = !world || world->is_root();
  o.parallel = parallel.get();
  const std::string build = dense ? "dense" : !e.method.empty() ? e.method : "tensorized";
  if (root)
    std::cerr << "bench step: " << e.name << " (" << build << "), batch "
            << o.batch << " x " << o.length << " tokens, " << o.warmup << " warm-up + " << o.repeats
            << " measured steps..." << std::endl;
  const auto result = benchmark_step(e.model, e.training, o);
  auto j = result.to_json();
  j["config"] = e.name;
  j["build"] = build;
  j["device"] = e.training.device;
  j["precision"] = precision_name(e.training.precision);
  j["batch"] = o.batch;
  j["seq"] = o.length;
  j["blas"] = blas_kernels().describe();
  j["threads"] = at::get_num_threads();
  j["contraction"] = "merged";
  if (!root) return 0;
  if (r.count("json")) {
    std::cout << j.dump(2) << std::endl;
    return 0;
  }
  std::printf("%s %s %s batch %lld seq %lld (%s, %d threads): median %.1f ms/step (min %.1f, max %.1f; CPU %.1f ms), "
              "%.0f tokens/s, peak memory %.1f MB (tensors %.1f MB), %lld parameters\n",
              e.name.c_str(), build.c_str(), precision_name(e.training.precision), static_cast<long long>(o.batch),
              static_cast<long long>(o.length), result.device.c_str(), j["threads"].get<int>(), result.timing.median_ms, result.timing.min_ms,
              result.timing.max_ms, result.timing.cpu_median_ms, result.tokens_per_s(), result.peak_mem_mb, result.peak_tensor_mb,
              static_cast<long long>(result.params));
  if (result.ranks > 1)
    std::printf("%d ranks: gradient all-reduce %.2f ms/step of %.3f MB, after %.2f ms waiting for the slowest rank\n",
                result.ranks, result.all_reduce_ms, static_cast<double>(result.all_reduce_bytes) / 1e6, result.wait_ms);
  if (result.profile) print_profile(e.name + " " + build + " batch " + std::to_string(o.batch), j["profile"]);
  return 0;
}

Register reg("bench step", "Time a full training step, tensorized vs dense (--dense, --compare)", run);

}  // namespace
}  // namespace comera::cli
