// `comera bench step`: median time and peak memory of a full training step, tensorized or dense.
#include "core/training/experiment.h"
#include "core/training/step_benchmark.h"
#include "core/util/error.h"
#include "search/cli/command.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>

namespace comera::cli {
namespace {

int run(int argc, char** argv) {
  auto options = make_options(
      "bench step",
      "Median wall time and peak memory of one full training step (forward, loss with the size\n"
      "terms, backward, AdamW step) on random token ids. Run once with and once without --dense\n"
      "to compare the tensorized build with the dense build of the same architecture.");
  options.add_options()("config", "Experiment file",
                        cxxopts::value<std::string>()->default_value("experiments/mnli_six_encoder.json"))(
      "batch", "Sequences per step", cxxopts::value<int64_t>()->default_value("8"))(
      "seq", "Tokens per sequence", cxxopts::value<int64_t>()->default_value("128"))(
      "dense", "Build every layer dense")(
      "warmup", "Unmeasured steps first", cxxopts::value<int>()->default_value("2"))(
      "repeats", "Measured steps", cxxopts::value<int>()->default_value("5"))(
      "json", "Machine-readable output");
  auto parsed = parse(options, argc, argv);
  if (!parsed) return 0;
  const auto& r = *parsed;
  auto e = load_experiment(r["config"].as<std::string>());
  const bool dense = r.count("dense") > 0;
  if (dense) e.model = e.model.dense();
  StepBenchmarkOptions o;
  o.batch = r["batch"].as<int64_t>();
  o.length = r["seq"].as<int64_t>();
  o.warmup = r["warmup"].as<int>();
  o.repeats = r["repeats"].as<int>();
  if (o.batch < 1 || o.length < 1 || o.repeats < 1)
    throw Error("--batch, --seq and --repeats must be at least 1");
  std::cerr << "bench step: " << e.name << (dense ? " (dense)" : " (tensorized)") << ", batch "
            << o.batch << " x " << o.length << " tokens, " << o.warmup << " warm-up + " << o.repeats
            << " measured steps..." << std::endl;
  const auto result = benchmark_step(e.model, e.training, o);
  auto j = result.to_json();
  j["config"] = e.name;
  j["build"] = dense ? "dense" : "tensorized";
  j["batch"] = o.batch;
  j["seq"] = o.length;
  if (r.count("json")) {
    std::cout << j.dump(2) << std::endl;
    return 0;
  }
  std::printf("%s %s batch %lld seq %lld: median %.1f ms/step (min %.1f, max %.1f), %.0f tokens/s, "
              "peak memory %.1f MB (tensors %.1f MB), %lld parameters\n",
              e.name.c_str(), dense ? "dense" : "tensorized", static_cast<long long>(o.batch),
              static_cast<long long>(o.length), result.timing.median_ms, result.timing.min_ms,
              result.timing.max_ms, result.tokens_per_s(), result.peak_mem_mb, result.peak_tensor_mb,
              static_cast<long long>(result.params));
  return 0;
}

Register reg("bench step", "Time a full training step, tensorized vs dense (--dense)", run);

}  // namespace
}  // namespace comera::cli
