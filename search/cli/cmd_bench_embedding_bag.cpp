// `comera bench embedding-bag`: the DLRM's 26 table lookups per example at click-log batch sizes,
// TTM embedding bags (optimised and naive lookup) against dense EmbeddingBag tables,
// forward+backward, time and memory (search/bench/embedding_bag_benchmark.h).
#include "core/util/error.h"
#include "core/util/random.h"
#include "search/bench/embedding_bag_benchmark.h"
#include "search/cli/command.h"
#include "search/environment.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>

namespace comera::cli {
namespace {

void print_batch(const EmbeddingBagBatchResult& batch) {
  for (const auto& x : batch.methods) {
    std::string name = x.method;
    name.resize(20, ' ');
    std::printf("%7lld  %9lld  %s %10.1f %9.1f  %10.2f %9.1f %9.1f  %15.2f\n",
                static_cast<long long>(batch.batch), static_cast<long long>(batch.distinct_ids),
                name.c_str(), x.time.median_ms, x.time.cpu_median_ms, x.speedup_vs_naive,
                x.held_bytes / 1e6, x.peak_bytes / 1e6, x.peak_ratio_naive_over_this);
  }
  std::printf("         (optimised vs naive output: max |diff| %.2e)\n", batch.max_abs_diff);
}

int run(int argc, char** argv) {
  auto options = make_options(
      "bench embedding-bag",
      "The DLRM's embedding lookups: 26 Criteo Kaggle tables (optionally scaled), one Zipf id per\n"
      "table per example; tables of --min-rows rows and more as TTM embedding bags through the\n"
      "optimised lookup (merged tables, distinct ids once) and the naive one, against dense\n"
      "EmbeddingBag tables (dense gradient as the trainer uses them; sparse gradient as the\n"
      "reference DLRM). Forward+backward median time and CPU tensor memory.");
  options.add_options()("batch", "Comma list of batch sizes (examples)",
                        cxxopts::value<std::string>()->default_value("10000,20000,40000"))(
      "scale", "Table sizes as a share of Kaggle's, in (0, 1]", cxxopts::value<double>()->default_value("1"))(
      "min-rows", "Tables with this many rows or more are TTM", cxxopts::value<int64_t>()->default_value("200000"))(
      "cores", "TTM cores per table", cxxopts::value<int64_t>()->default_value("3"))(
      "rank", "TTM rank on every interior bond", cxxopts::value<int64_t>()->default_value("12"))(
      "no-dense", "Skip the dense methods: two copies of the tables (dense and sparse gradient), "
      "2.16 GB each at scale 1, and the dense gradient as much again")(
      "big-only", "Only the tables of --min-rows rows and more, in every method (the lookup's own "
      "ratios, without the small dense tables all methods share)")(
      "repeats", "Timed repeats per method (median reported)", cxxopts::value<int>()->default_value("3"))(
      "warmup", "Untimed runs first", cxxopts::value<int>()->default_value("1"))(
      "zipf", "Zipf exponent of the ids", cxxopts::value<double>()->default_value("1.05"))(
      "seed", "Seed for ids and parameters", cxxopts::value<uint64_t>()->default_value("1"))(
      "clock", "Time the ratios use: wall, or cpu (process CPU time)",
      cxxopts::value<std::string>()->default_value("wall"))(
      "json", "Machine-readable output");
  auto parsed = parse(options, argc, argv);
  if (!parsed) return 0;
  const auto& r = *parsed;
  const auto batches = int_list_flag(r, "batch", 1);
  EmbeddingBagBenchmarkOptions o;
  o.scale = r["scale"].as<double>();
  o.min_rows = r["min-rows"].as<int64_t>();
  o.cores = r["cores"].as<int64_t>();
  o.rank = r["rank"].as<int64_t>();
  o.dense = r.count("no-dense") == 0;
  o.big_only = r.count("big-only") > 0;
  o.repeats = repeats_flag(r);
  o.warmup = warmup_flag(r);
  o.zipf = r["zipf"].as<double>();
  o.seed = r["seed"].as<uint64_t>();
  const std::string clock = r["clock"].as<std::string>();
  if (clock != "wall" && clock != "cpu") throw Error("--clock must be 'wall' or 'cpu', got '" + clock + "'");
  o.cpu_clock = clock == "cpu";
  require_zipf_exponent(o.zipf, "--zipf");
  if (o.cores < 1 || o.rank < 1 || o.min_rows < 1) throw Error("--cores, --rank and --min-rows must be >= 1");
  const bool json = r.count("json") > 0;
  std::ostream& log = json ? std::cerr : std::cout;

  EmbeddingBagBenchmark bench(o);
  log << "comera bench embedding-bag: " << bench.table_sizes().size() << " tables (Kaggle sizes x " << o.scale
      << "), " << bench.ttm_tables() << " of them TTM (" << o.cores << " cores, rank " << o.rank
      << "); all tables " << bench.ttm_params() << " parameters with TTM vs " << bench.dense_params()
      << " dense\nids: Zipf(s=" << o.zipf << ") per table, seed " << o.seed << "; time: forward+backward, median of "
      << o.repeats << " after " << o.warmup << " warm-up, on " << current_environment().describe() << "; ratios from "
      << clock << " time\nmemory: CPU tensor bytes above the step's start: held after forward, peak over "
         "forward+backward\n\n";
  if (!json)
    std::cout << "  batch  TTM ids   method                median ms    cpu ms  naive/this   held MB   peak MB"
                 "  naive/this peak\n";
  std::vector<EmbeddingBagBatchResult> results;
  for (const int64_t b : batches) {
    results.push_back(bench.run(b, [&](const std::string& method) {
      log << "  measuring batch " << b << ": " << method << " ..." << std::endl;
    }));
    if (!json) print_batch(results.back());
  }
  if (json) {
    auto out = bench.to_json(results);
    out["environment"] = current_environment().to_json();
    std::cout << out.dump(2) << std::endl;
  }
  return 0;
}

Register reg("bench embedding-bag", "DLRM embedding lookups: TTM optimised vs naive vs dense (time, memory)", run);

}  // namespace
}  // namespace comera::cli
