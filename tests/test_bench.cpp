// The benchmarks as library code (search/bench/, search/bench/): tiny runs that check the result
// structs and their JSON, the callbacks, and the errors; the timings themselves are not judged.
#include "search/bench/embedding_bag_benchmark.h"
#include "search/bench/layer_benchmark.h"
#include "search/bench/ttm_benchmark.h"
#include "core/kernels/cpu/thin_gemm.h"
#include "core/kernels/cpu/thin_gemm_bf16.h"
#include "core/util/error.h"
#include "search/bench/paths_benchmark.h"
#include "tests/support/catch.h"

#include <nlohmann/json.hpp>

using namespace comera;
using Catch::Matchers::Contains;

TEST_CASE("layer benchmark: the paper's three shapes, dense against TT", "[bench]") {
  LayerBenchmarkOptions o;
  o.tokens = 4;
  o.warmup = 0;
  o.repeats = 1;
  int seen = 0;
  const auto rows = benchmark_layers(o, [&](const LayerBenchmarkRow&) { ++seen; });
  REQUIRE(rows.size() == 3);
  CHECK(seen == 3);
  CHECK(rows[0].layer == "attention 768->768");
  CHECK(rows[1].dense_macs == 3 * 4 * 768 * 3072);
  CHECK(rows[2].tt_macs > 0);
  CHECK(rows[2].tt_macs < rows[2].dense_macs);
  const auto j = rows[1].to_json();
  CHECK(j["shape"] == rows[1].shape);
  CHECK(j["tokens"] == 4);
  CHECK(j["mac_ratio"].get<double>() == Approx(rows[1].mac_ratio()));
  CHECK(j.contains("dense_ms"));
  CHECK(j.contains("tt_min_ms"));
  // A bf16 forward runs the AVX512-BF16 kernels where the CPU has them, as bench layer's text says.
  o.precision = Precision::Bf16;
  CHECK(benchmark_layers(o)[0].kernels == (thin::enabled() && thin_bf16::enabled()));
  o.tokens = 0;
  CHECK_THROWS_WITH(benchmark_layers(o), Contains("tokens must be >= 1"));
}

TEST_CASE("TTM lookup benchmark: four methods per batch, ratios against naive and dense", "[bench]") {
  TtmBenchmarkOptions o;
  o.warmup = 0;
  o.repeats = 1;
  TtmBenchmark bench(o);
  CHECK(bench.shape().find("16,20,10,10") != std::string::npos);
  CHECK(bench.vocab() == 30522);
  CHECK(bench.dense_params() == 30522 * bench.dim());
  CHECK(bench.ttm_params() < bench.dense_params());
  std::vector<std::string> started;
  const auto batch = bench.run(64, [&](const std::string& m) { started.push_back(m); });
  // The layer dedups only where a quarter of the ids or more repeat: the first row says which.
  const bool dedups = batch.distinct_ids * 4 <= 64 * 3;
  CHECK(started == std::vector<std::string>{dedups ? "optimised, dedup" : "optimised, dedup skipped",
                                            "optimised, no dedup", "naive", "dense nn::Embedding"});
  REQUIRE(batch.methods.size() == 4);
  CHECK(batch.distinct_ids >= 1);
  CHECK(batch.distinct_ids <= 64);
  CHECK(batch.max_abs_diff < 1e-3);
  CHECK(batch.methods[2].speedup_vs_naive == Approx(1));
  CHECK(batch.methods[3].speedup_vs_dense == Approx(1));
  CHECK(batch.methods[0].peak_bytes > 0);
  const auto report = bench.to_json({batch});
  CHECK(report["benchmark"] == "ttm_lookup");
  CHECK(report["ratio_clock"] == "wall");
  REQUIRE(report["rows"].size() == 4);
  CHECK(report["rows"][1]["method"] == "optimised, no dedup");
  CHECK(report["rows"][1]["ids"] == 64);
  CHECK_THROWS_WITH(bench.run(0), Contains("at least one id"));
  CHECK(report["memory"] == "CPU tensor bytes through LibTorch's allocator above the step's start");
  // Uniform ids over 30,522: 8 ids are all distinct, so the layer does not dedup, and says so.
  o.zipf = 0;
  TtmBenchmark uniform(o);
  const auto few = uniform.run(8);
  REQUIRE(few.distinct_ids == 8);
  CHECK(few.methods[0].method == "optimised, dedup skipped");
}

TEST_CASE("paths benchmark: a case per layer, rank and token count, checked a second time", "[bench]") {
  bench::PathsBenchmarkOptions o;
  o.layers = {{"custom", {2, 3}, {3, 2}}};
  o.ranks = {2};
  o.tokens = {1, 4};
  o.tuner.candidates.top_k = 1;
  o.tuner.candidates.mixed = 0;
  o.tuner.measure.budget_ms = 1;
  o.tuner.measure.min_repeats = 1;
  o.tuner.measure.max_repeats = 1;
  std::vector<std::string> started;
  bench::PathsBenchmarkEvents events;
  events.on_start = [&](size_t number, size_t total, const std::string& layer, const TTShape&,
                        int64_t tokens) {
    started.push_back(std::to_string(number) + "/" + std::to_string(total) + " " + layer + " " +
                      std::to_string(tokens));
  };
  const auto cases = bench::benchmark_paths(o, events);
  CHECK(started == std::vector<std::string>{"1/2 custom 1", "2/2 custom 4"});
  REQUIRE(cases.size() == 2);
  const auto rec = cases[1].to_json();
  CHECK(rec["layer"] == "custom");
  CHECK(rec["tokens"] == 4);
  CHECK(rec["clock"] == "wall");
  CHECK(rec["verify"].contains("chosen"));
  CHECK(rec["candidates"].size() >= 2);
  o.verify = false;
  o.tokens = {1};
  CHECK(bench::benchmark_paths(o)[0].to_json()["verify"].is_null());
  CHECK(bench::paper_paths_layer("ffn_in").out_modes == std::vector<int64_t>{12, 16, 16});
  CHECK_THROWS_WITH(bench::paper_paths_layer("ffn"), Contains("unknown paper layer 'ffn'"));
}

TEST_CASE("embedding-bag benchmark: 26 tables, TTM optimised and naive agree, dense methods",
          "[bench]") {
  EmbeddingBagBenchmarkOptions o;
  o.scale = 0.001;
  o.min_rows = 2000;  // the 5 largest tables at this scale
  o.rank = 4;
  o.warmup = 0;
  o.repeats = 1;
  EmbeddingBagBenchmark bench(o);
  CHECK(bench.table_sizes().size() == 26);
  CHECK(bench.ttm_tables() == 5);
  CHECK(bench.ttm_params() < bench.dense_params());
  std::vector<std::string> seen;
  const auto r = bench.run(40, [&](const std::string& m) { seen.push_back(m); });
  REQUIRE(r.methods.size() == 4);
  CHECK(seen == std::vector<std::string>{"TTM optimised", "TTM naive", "dense EmbeddingBag", "dense, sparse grad"});
  CHECK(r.lookups == 40 * 26);
  CHECK(r.max_abs_diff < 1e-4);
  CHECK(r.methods[1].speedup_vs_naive == Approx(1.0));
  const auto j = bench.to_json({r});
  CHECK(j["rows"].size() == 4);
  CHECK(j["ttm_tables"] == 5);
  // Only the big tables: the same 5 TTM tables, nothing else, in every method.
  o.big_only = true;
  EmbeddingBagBenchmark big(o);
  CHECK(big.table_sizes().size() == 5);
  CHECK(big.ttm_tables() == 5);
  const auto rb = big.run(40, {});
  CHECK(rb.lookups == 40 * 5);
  CHECK(rb.max_abs_diff < 1e-4);
  o.min_rows = 100000000;
  CHECK_THROWS_WITH(EmbeddingBagBenchmark(o), Contains("lower --min-rows"));
}
