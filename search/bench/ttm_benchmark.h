#pragma once
// The TTM embedding lookup (docs/method.md section 5) on the paper's table
// ([16,20,10,10]x[4,4,8,6], ranks 32, vocabulary 30,522): optimised, with and without
// distinct-id dedup, against the naive per-token contraction and a dense torch::nn::Embedding;
// forward+backward time and CPU tensor memory. The numbers behind `comera bench ttm`.
#include "core/util/timing.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace comera {

struct TtmBenchmarkOptions {
  int warmup = 1, repeats = 5;
  double zipf = 1.0;       // ids ~ Zipf(s) over the vocabulary, frequency ranks shuffled over ids
  uint64_t seed = 1;       // for the ids and the parameters
  bool cpu_clock = false;  // the speed ratios from process CPU time, not wall time
  std::string device = "cpu";  // "cpu", "cuda", "cuda:N"
};

struct TtmMethodResult {
  // "optimised, dedup" (or "optimised, dedup skipped" where under a quarter of the ids
  // repeat and the layer does not dedup), "optimised, no dedup", "naive", "dense nn::Embedding".
  std::string method;
  Timing time;
  // CPU tensor bytes above the step's start: held after forward (output and what backward
  // keeps), and the peak over forward and backward.
  int64_t held_bytes = 0, peak_bytes = 0;
  double speedup_vs_naive = 0, speedup_vs_dense = 0, peak_ratio_naive_over_this = 0;
};

struct TtmBatchResult {
  int64_t ids = 0, distinct_ids = 0;
  double max_abs_diff = 0;  // optimised against naive output
  std::vector<TtmMethodResult> methods;
  // One row per method, each with the batch's ids, distinct ids and difference.
  nlohmann::json to_json() const;
};

class TtmBenchmark {
 public:
  // Builds the paper's TTM table and a dense one of the same size, seeded.
  explicit TtmBenchmark(const TtmBenchmarkOptions& options);
  ~TtmBenchmark();
  TtmBenchmark(const TtmBenchmark&) = delete;
  TtmBenchmark& operator=(const TtmBenchmark&) = delete;

  std::string shape() const;
  int64_t vocab() const;
  int64_t dim() const;
  int64_t ttm_params() const;  // cores and rank vectors
  int64_t dense_params() const;
  // What the memory figures count, on the device the benchmark runs on.
  std::string memory_counted() const;

  // Every method on one batch of `ids` ids; on_method hears of each as it starts.
  TtmBatchResult run(int64_t ids, const std::function<void(const std::string& method)>& on_method = {});
  // The report: the settings, then the rows of every batch.
  nlohmann::json to_json(const std::vector<TtmBatchResult>& batches) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace comera
