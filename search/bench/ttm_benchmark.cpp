#include "search/bench/ttm_benchmark.h"

#include "search/bench/forward_backward.h"

#include "core/layers/ttm_embedding.h"
#include "core/layers/ttm_lookup.h"
#include "core/util/device.h"
#include "core/util/error.h"
#include "core/util/random.h"

#include <ATen/ATen.h>
#include <torch/autograd.h>
#include <torch/nn/modules/embedding.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

namespace comera {

namespace {

constexpr int64_t kVocab = 30522;

// Token ids with a word-like frequency profile: rank k has weight 1/(k+1)^s, and ranks are
// spread over the vocabulary by a seeded shuffle (frequent tokens are not the low ids).
at::Tensor zipf_ids(int64_t n, double s, uint64_t seed) {
  Rng rng(seed);
  const auto id_of_rank = rng.permutation(kVocab);
  std::vector<double> cdf(kVocab);
  double total = 0;
  for (int64_t k = 0; k < kVocab; ++k) cdf[k] = total += 1.0 / std::pow(k + 1.0, s);
  at::Tensor ids = at::empty({n}, at::kLong);
  int64_t* p = ids.data_ptr<int64_t>();
  const uint64_t scale = uint64_t{1} << 53;
  for (int64_t i = 0; i < n; ++i) {
    const double u = static_cast<double>(rng.below(scale)) / scale * total;
    const auto k = std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin();
    p[i] = id_of_rank[std::min<int64_t>(k, kVocab - 1)];
  }
  return ids;
}

struct Method {
  std::string name;
  torch::nn::Module* module;
  std::function<at::Tensor(const at::Tensor&)> forward;
};

}  // namespace

struct TtmBenchmark::Impl {
  TtmBenchmarkOptions options;
  TTMEmbedding ttm{nullptr};
  torch::nn::Embedding dense{nullptr};
  c10::Device device{c10::kCPU};
  std::vector<Method> methods;
};

TtmBenchmark::TtmBenchmark(const TtmBenchmarkOptions& options) : impl_(std::make_unique<Impl>()) {
  if (options.repeats < 1) throw Error("TTM benchmark: repeats must be >= 1");
  Impl& m = *impl_;
  m.options = options;
  at::manual_seed(options.seed);
  m.ttm = TTMEmbedding(TTMEmbeddingOptions(kVocab, {16, 20, 10, 10}, {4, 4, 8, 6}, {1, 32, 32, 32, 1}));
  m.dense = torch::nn::Embedding(kVocab, m.ttm->shape().dim());
  m.device = parse_device(options.device);
  require_device(m.device);
  m.ttm->to(m.device);
  m.dense->to(m.device);
  TTMEmbeddingImpl* ttm = m.ttm.get();
  torch::nn::EmbeddingImpl* dense = m.dense.get();
  m.methods = {{"optimised, dedup", ttm,
                [ttm](const at::Tensor& ids) {
                  ttm->options.dedup(true);
                  return ttm->forward(ids);
                }},
               {"optimised, no dedup", ttm,
                [ttm](const at::Tensor& ids) {
                  ttm->options.dedup(false);
                  return ttm->forward(ids);
                }},
               {"naive", ttm, [ttm](const at::Tensor& ids) { return ttm->forward_naive(ids); }},
               {"dense nn::Embedding", dense,
                [dense](const at::Tensor& ids) { return dense->forward(ids); }}};
}

TtmBenchmark::~TtmBenchmark() = default;

std::string TtmBenchmark::shape() const { return impl_->ttm->shape().str(); }
int64_t TtmBenchmark::vocab() const { return kVocab; }
std::string TtmBenchmark::memory_counted() const {
  return impl_->device.is_cpu() ? "CPU tensor bytes through LibTorch's allocator"
                                : "tensor bytes in the GPU's caching allocator (" + impl_->device.str() + ")";
}
int64_t TtmBenchmark::dim() const { return impl_->ttm->shape().dim(); }
int64_t TtmBenchmark::dense_params() const { return impl_->dense->weight.numel(); }

int64_t TtmBenchmark::ttm_params() const {
  int64_t n = 0;
  for (const auto& p : impl_->ttm->parameters()) n += p.numel();
  return n;
}

TtmBatchResult TtmBenchmark::run(int64_t n, const std::function<void(const std::string&)>& on_method) {
  if (n < 1) throw Error("TTM benchmark: a batch needs at least one id, got " + std::to_string(n));
  Impl& m = *impl_;
  TtmBatchResult batch;
  batch.ids = n;
  const at::Tensor host_ids = zipf_ids(n, m.options.zipf, m.options.seed);
  batch.distinct_ids = std::get<0>(at::_unique2(host_ids)).numel();
  const at::Tensor ids = host_ids.to(m.device);
  const at::Tensor grad = at::randn({n, dim()}).to(m.device);
  {
    at::NoGradGuard no_grad;
    batch.max_abs_diff = (m.ttm->forward(ids) - m.ttm->forward_naive(ids)).abs().max().item<double>();
  }
  // The layer skips dedup when under a quarter of the ids repeat: the row says so.
  const bool dedups = distinct_ids(host_ids).inverse.defined();
  for (const auto& method : m.methods) {
    const auto name = &method == &m.methods.front() && !dedups ? std::string("optimised, dedup skipped") : method.name;
    if (on_method) on_method(name);
    const auto measured = measure_forward_backward({method.module}, [&] { return method.forward(ids); }, grad,
                                                   m.options.warmup, m.options.repeats, m.device);
    TtmMethodResult r;
    r.method = name;
    r.time = measured.time;
    r.held_bytes = measured.held_bytes;
    r.peak_bytes = measured.peak_bytes;
    batch.methods.push_back(r);
  }
  auto ms = [&](const TtmMethodResult& r) {
    return m.options.cpu_clock ? r.time.cpu_median_ms : r.time.median_ms;
  };
  const TtmMethodResult naive = batch.methods[2], dense = batch.methods[3];
  for (auto& r : batch.methods) {
    r.speedup_vs_naive = ms(naive) / ms(r);
    r.speedup_vs_dense = ms(dense) / ms(r);
    r.peak_ratio_naive_over_this = static_cast<double>(naive.peak_bytes) / r.peak_bytes;
  }
  return batch;
}

nlohmann::json TtmBatchResult::to_json() const {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : methods)
    rows.push_back({{"ids", ids},
                    {"distinct_ids", distinct_ids},
                    {"method", r.method},
                    {"median_ms", r.time.median_ms},
                    {"min_ms", r.time.min_ms},
                    {"max_ms", r.time.max_ms},
                    {"cpu_ms", r.time.cpu_median_ms},
                    {"speedup_vs_naive", r.speedup_vs_naive},
                    {"speedup_vs_dense", r.speedup_vs_dense},
                    {"held_after_forward_bytes", r.held_bytes},
                    {"peak_bytes", r.peak_bytes},
                    {"peak_memory_ratio_naive_over_this", r.peak_ratio_naive_over_this},
                    {"max_abs_diff_optimised_vs_naive", max_abs_diff}});
  return rows;
}

nlohmann::json TtmBenchmark::to_json(const std::vector<TtmBatchResult>& batches) const {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& b : batches)
    for (const auto& row : b.to_json()) rows.push_back(row);
  const auto& o = impl_->options;
  return {{"benchmark", "ttm_lookup"},
          {"shape", shape()},
          {"vocab", kVocab},
          {"zipf_s", o.zipf},
          {"seed", o.seed},
          {"repeats", o.repeats},
          {"ratio_clock", o.cpu_clock ? "cpu" : "wall"},
          {"warmup", o.warmup},
          {"memory", memory_counted() + " above the step's start"},
          {"rows", rows}};
}

}  // namespace comera
