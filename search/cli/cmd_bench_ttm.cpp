// `comera bench ttm`: the TTM embedding lookup (docs/method.md section 5) against the naive
// per-token contraction and a dense torch::nn::Embedding, forward+backward, time and memory
// (search/bench/ttm_benchmark.h).
#include "search/bench/ttm_benchmark.h"
#include "core/util/error.h"
#include "core/util/format.h"
#include "core/util/random.h"
#include "search/cli/command.h"
#include "search/environment.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>

namespace comera::cli {
namespace {

void print_batch(const TtmBatchResult& batch) {
  for (const auto& x : batch.methods) {
    std::string name = x.method;
    name.resize(24, ' ');
    std::printf("%8lld  %8lld  %s %10s %9s  %10s  %10s %9s %9s  %15s\n",
                static_cast<long long>(batch.ids), static_cast<long long>(batch.distinct_ids),
                name.c_str(), fixed_text(x.time.median_ms, 1).c_str(), fixed_text(x.time.cpu_median_ms, 1).c_str(),
                fixed_text(x.speedup_vs_naive, 2).c_str(), fixed_text(x.speedup_vs_dense, 2).c_str(),
                fixed_text(x.held_bytes / 1e6, 1).c_str(), fixed_text(x.peak_bytes / 1e6, 1).c_str(),
                fixed_text(x.peak_ratio_naive_over_this, 2).c_str());
  }
  std::printf("          (optimised vs naive output: max |diff| %.2e)\n", batch.max_abs_diff);
}

int run(int argc, char** argv) {
  auto options = make_options(
      "bench ttm",
      "TTM embedding lookup (paper's [16,20,10,10]x[4,4,8,6], ranks 32, vocab 30,522): optimised "
      "(merged tables, with and without distinct-id dedup) vs naive per-token contraction vs "
      "dense nn::Embedding; forward+backward median time and CPU tensor memory");
  options.add_options()("ids", "Comma list of batch sizes (ids per lookup)",
                        cxxopts::value<std::string>()->default_value("4096,40000"))(
      "repeats", "Timed repeats per method (median reported)",
      cxxopts::value<int>()->default_value("5"))(
      "warmup", "Untimed runs first", cxxopts::value<int>()->default_value("1"))(
      "zipf", "Zipf exponent s of the id distribution", cxxopts::value<double>()->default_value("1.0"))(
      "seed", "Seed for ids and parameters", cxxopts::value<uint64_t>()->default_value("1"))(
      "clock", "Time the speed ratios use: wall, or cpu (process CPU time; steadier on a shared "
               "machine with --threads 1)",
      cxxopts::value<std::string>()->default_value("wall"))(
      "device", "Where to compute: cpu, cuda or cuda:N (memory: the GPU's caching allocator)",
      cxxopts::value<std::string>()->default_value("cpu"))(
      "json", "Machine-readable output");
  auto parsed = parse(options, argc, argv);
  if (!parsed) return 0;
  const auto& r = *parsed;
  const auto sizes = int_list_flag(r, "ids", 1);
  TtmBenchmarkOptions o;
  o.repeats = repeats_flag(r);
  o.warmup = warmup_flag(r);
  o.zipf = r["zipf"].as<double>();
  o.seed = r["seed"].as<uint64_t>();
  o.device = r["device"].as<std::string>();
  const bool json = r.count("json") > 0;
  require_zipf_exponent(o.zipf, "--zipf");
  const std::string clock = r["clock"].as<std::string>();
  if (clock != "wall" && clock != "cpu")
    throw Error("--clock must be 'wall' or 'cpu', got '" + clock + "'");
  o.cpu_clock = clock == "cpu";
  std::ostream& log = json ? std::cerr : std::cout;

  TtmBenchmark bench(o);
  log << "comera bench ttm: TTM " << bench.shape() << " (" << bench.ttm_params()
      << " parameters with rank vectors) vs dense " << bench.vocab() << "x" << bench.dim() << " ("
      << bench.dense_params() << ")\n"
      << "ids: Zipf(s=" << o.zipf << ") over the vocabulary, frequency ranks shuffled over ids (seed "
      << o.seed << ")\n"
      << "time: forward+backward, median of " << o.repeats << " after " << o.warmup << " warm-up, "
      << current_environment(o.device).describe() << "; wall and cpu (process CPU time, all threads); "
      << "ratios from " << clock << " time\n"
      << "memory: " << bench.memory_counted() << " above the step's start: held after forward (output + saved for backward) and peak "
         "during forward+backward\n\n";
  if (!json) {
    std::cout << "     ids  distinct  method                   median ms    cpu ms  naive/this  "
                 "dense/this   held MB   peak MB  naive/this peak\n";
  }
  std::vector<TtmBatchResult> batches;
  for (const int64_t n : sizes) {
    batches.push_back(bench.run(n, [&](const std::string& method) {
      log << "  measuring " << n << " ids: " << method << " ..." << std::endl;
    }));
    if (!json) print_batch(batches.back());
  }
  if (json) {
    auto out = bench.to_json(batches);
    out["environment"] = current_environment(o.device).to_json();
    std::cout << out.dump(2) << std::endl;
  }
  return 0;
}

Register reg("bench ttm", "TTM embedding lookup: optimised vs naive vs dense (time, memory)", run);

}  // namespace
}  // namespace comera::cli
