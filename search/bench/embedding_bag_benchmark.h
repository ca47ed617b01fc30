#pragma once
// The DLRM's embedding lookups (26 tables, one id per table per example, Zipf-skewed ids) at
// click-log batch sizes: the tables of at least `min_rows` rows as TTM embedding bags through the
// optimised lookup (merged tables, distinct ids once) and through the naive one, against dense
// torch::nn::EmbeddingBag tables (dense gradient, as the trainer uses them, and sparse gradient,
// as the reference DLRM does). Forward+backward time and CPU tensor memory. The numbers behind
// `comera bench embedding-bag`.
#include "core/util/timing.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace comera {

struct EmbeddingBagBenchmarkOptions {
  double scale = 1;          // table sizes: Kaggle's x scale (synth-criteo's scaling)
  int64_t min_rows = 200000; // tables this large are TTM (the Kaggle preset's choice)
  int64_t cores = 3, rank = 12;
  int64_t dim = 16;
  double zipf = 1.05;
  uint64_t seed = 1;
  int warmup = 1, repeats = 3;
  bool cpu_clock = false;
  bool dense = true;  // also the dense methods (at scale 1: 2.16 GB of tables, as much gradient)
  // Only the tables of min_rows rows and more, in every method: the lookup's own ratios, without
  // the small dense tables every method shares.
  bool big_only = false;
};

struct EmbeddingBagMethodResult {
  std::string method;
  Timing time;
  int64_t held_bytes = 0, peak_bytes = 0;  // CPU tensor bytes above the step's start
  double speedup_vs_naive = 0, peak_ratio_naive_over_this = 0;
};

struct EmbeddingBagBatchResult {
  int64_t batch = 0, lookups = 0, distinct_ids = 0;  // distinct over the TTM tables
  double max_abs_diff = 0;  // optimised against naive output
  std::vector<EmbeddingBagMethodResult> methods;
  nlohmann::json to_json() const;
};

class EmbeddingBagBenchmark {
 public:
  explicit EmbeddingBagBenchmark(const EmbeddingBagBenchmarkOptions& options);
  ~EmbeddingBagBenchmark();
  EmbeddingBagBenchmark(const EmbeddingBagBenchmark&) = delete;
  EmbeddingBagBenchmark& operator=(const EmbeddingBagBenchmark&) = delete;

  const std::vector<int64_t>& table_sizes() const;
  int64_t ttm_tables() const;
  int64_t ttm_params() const;    // every table's parameters with the TTM ones
  int64_t dense_params() const;  // every table dense

  // Every method on one batch of `batch` examples; on_method hears of each as it starts.
  EmbeddingBagBatchResult run(int64_t batch, const std::function<void(const std::string&)>& on_method = {});
  nlohmann::json to_json(const std::vector<EmbeddingBagBatchResult>& batches) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace comera
