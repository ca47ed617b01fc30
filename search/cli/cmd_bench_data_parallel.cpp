// `comera bench data-parallel`: the training step on one rank with 2 threads against 2 ranks with
// 1 thread each (c10d Gloo over 127.0.0.1), tensorized and dense, each in its own processes; the
// gradient all-reduce's time and bytes per step, and the step times those bytes project to on
// 1, 10 and 100 Gbit/s links.
#include "core/util/error.h"
#include "search/bench/all_reduce_projection.h"
#include "search/cli/bench_child.h"
#include "search/cli/command.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>

namespace comera::cli {
namespace {

constexpr double kLinks[] = {1, 10, 100};  // Gbit/s

int run(int argc, char** argv) {
  auto options = make_options(
      "bench data-parallel",
      "Median training-step time of the experiment's model on random inputs: 1 rank x 2 threads\n"
      "against 2 ranks x 1 thread (comera bench step --nproc 2), tensorized and dense, with the\n"
      "gradient all-reduce's median time and its bytes per step, and the step times those bytes\n"
      "project to on slower links (a ring all-reduce moves 2(W-1)/W x the bytes per rank). The\n"
      "layouts set the threads themselves: --threads is refused.");
  options.add_options()("config", "Experiment file",
                        cxxopts::value<std::string>()->default_value("experiments/mnli_six_encoder.json"))(
      "batch", "Sequences per step (all ranks together)", cxxopts::value<int64_t>()->default_value("8"))(
      "seq", "Tokens per sequence", cxxopts::value<int64_t>()->default_value("128"))(
      "warmup", "Unmeasured steps first", cxxopts::value<int>()->default_value("1"))(
      "repeats", "Measured steps", cxxopts::value<int>()->default_value("3"))(
      "json", "Machine-readable output");
  auto parsed = parse(options, argc, argv);
  if (!parsed) return 0;
  const auto& r = *parsed;
  // The layouts fix the threads: a --threads of the user's would be dropped.
  if (r.count("threads"))
    throw Error("--threads: bench data-parallel runs 1 rank x 2 threads against 2 ranks x 1 thread itself "
                "(leave out --threads; bench step --nproc N --threads T measures another layout)");
  const auto config = config_flag(r);
  warmup_flag(r);
  repeats_flag(r);
  if (r["seq"].as<int64_t>() < 1) throw Error("--seq must be at least 1");
  if (r["batch"].as<int64_t>() < 2)
    throw Error("--batch " + std::to_string(r["batch"].as<int64_t>()) +
                ": give at least 2, one sequence for each of the 2 ranks");
  for (const bool dense : {false, true}) bench_step_experiment(config, "", "", dense, "cpu");
  const std::vector<std::string> common{
      "--config", config, "--batch", std::to_string(r["batch"].as<int64_t>()),
      "--seq", std::to_string(r["seq"].as<int64_t>()), "--warmup", std::to_string(r["warmup"].as<int>()),
      "--repeats", std::to_string(r["repeats"].as<int>())};
  nlohmann::json rows = nlohmann::json::array();
  for (const std::string build : {"tensorized", "dense"})
    for (const int ranks : {1, 2}) {
      auto flags = common;
      flags.insert(flags.end(), {"--threads", ranks == 1 ? "2" : "1", "--nproc", std::to_string(ranks)});
      if (build == "dense") flags.push_back("--dense");
      std::cerr << build << ", " << ranks << " rank(s) x " << (ranks == 1 ? 2 : 1) << " thread(s)..." << std::endl;
      auto j = bench_step_in_child(flags);
      j["build"] = build;
      j["ranks"] = ranks;
      j["threads"] = ranks == 1 ? 2 : 1;
      rows.push_back(j);
    }
  const auto two = [&](const std::string& build) -> const nlohmann::json& {
    for (const auto& row : rows)
      if (row["build"] == build && row["ranks"] == 2) return row;
    throw Error("no 2-rank row for " + build);
  };
  nlohmann::json projections = nlohmann::json::array();
  for (const double link : kLinks) {
    nlohmann::json p = {{"gbit_per_s", link}};
    for (const std::string build : {"tensorized", "dense"}) {
      const auto& row = two(build);
      // all_reduce_ms is the transfer alone: the wait for the slower rank stays in the step.
      const double compute_s = (row["median_ms"].get<double>() - row["all_reduce_ms"].get<double>()) / 1e3;
      p[build + "_ms"] = 1e3 * projected_step_seconds(compute_s, row["all_reduce_bytes"].get<int64_t>(), 2, link);
      p[build + "_all_reduce_ms"] = 1e3 * ring_all_reduce_seconds(row["all_reduce_bytes"].get<int64_t>(), 2, link);
    }
    projections.push_back(p);
  }
  const double byte_ratio = static_cast<double>(two("dense")["all_reduce_bytes"].get<int64_t>()) /
                            static_cast<double>(two("tensorized")["all_reduce_bytes"].get<int64_t>());
  if (r.count("json")) {
    std::cout << nlohmann::json{{"rows", rows}, {"byte_ratio", byte_ratio}, {"projections", projections}}.dump(2)
              << std::endl;
    return 0;
  }
  std::printf("Measured on %s; dense GEMMs: %s.\n\n", rows[0]["device_description"].get<std::string>().c_str(),
              rows[0]["blas"].get<std::string>().c_str());
  std::printf("| build | ranks x threads | step ms | wait for the slower rank ms | all-reduce ms | all-reduce MB/step | parameters |\n"
              "|---|---|---:|---:|---:|---:|---:|\n");
  const auto cell = [](const nlohmann::json& row, const char* key, const char* format, double scale) {
    char text[32] = "-";
    if (row.contains(key)) std::snprintf(text, sizeof text, format, scale * row[key].get<double>());
    return std::string(text);
  };
  for (const auto& row : rows)
    std::printf("| %s | %d x %d | %.1f | %s | %s | %s | %lld |\n", row["build"].get<std::string>().c_str(),
                row["ranks"].get<int>(), row["threads"].get<int>(), row["median_ms"].get<double>(),
                cell(row, "all_reduce_wait_ms", "%.2f", 1).c_str(), cell(row, "all_reduce_ms", "%.2f", 1).c_str(), cell(row, "all_reduce_bytes", "%.3f", 1e-6).c_str(),
                static_cast<long long>(row["params"].get<int64_t>()));
  std::printf("\nDense gradients all-reduce %.1fx the bytes of tensorized ones.\n\n"
              "Projected step at 2 ranks (compute and the wait for the slower rank as measured, all-reduce at\n"
              "the link's rate without latency, no overlap: a lower bound):\n\n"
              "| link | tensorized all-reduce ms | tensorized step ms | dense all-reduce ms | dense step ms | dense / tensorized |\n"
              "|---:|---:|---:|---:|---:|---:|\n",
              byte_ratio);
  for (const auto& p : projections)
    std::printf("| %.0f Gbit/s | %.2f | %.1f | %.1f | %.1f | %.2fx |\n", p["gbit_per_s"].get<double>(),
                p["tensorized_all_reduce_ms"].get<double>(), p["tensorized_ms"].get<double>(),
                p["dense_all_reduce_ms"].get<double>(), p["dense_ms"].get<double>(),
                p["dense_ms"].get<double>() / p["tensorized_ms"].get<double>());
  return 0;
}

Register reg("bench data-parallel",
             "Time the step on 1 rank x 2 threads vs 2 ranks x 1 thread; all-reduce bytes and projections",
             run);

}  // namespace
}  // namespace comera::cli
