#include "search/bench/embedding_bag_benchmark.h"

#include "search/bench/forward_backward.h"

#include "dataprep/synth_criteo.h"
#include "core/layers/ttm_embedding_bag.h"
#include "core/util/error.h"
#include "core/util/random.h"

#include <ATen/ATen.h>
#include <torch/nn/modules/embedding.h>

#include <nlohmann/json.hpp>

#include <algorithm>

namespace comera {

namespace {

// Zipf ranks spread over a table's rows by a fixed bijection (frequent ids are not the low ids).
at::Tensor zipf_column(Rng& rng, int64_t rows, int64_t n, double s) {
  at::Tensor ids = at::empty({n}, at::kLong);
  int64_t* p = ids.data_ptr<int64_t>();
  // A prime above every table: k -> k * prime mod rows is a bijection (no overflow below 6.9e9 rows).
  const uint64_t prime = 2654435761u;
  for (int64_t i = 0; i < n; ++i)
    p[i] = static_cast<int64_t>(static_cast<uint64_t>(rng.zipf(rows, s)) * prime % static_cast<uint64_t>(rows));
  return ids;
}

// One way of looking up every table: (B, tables) ids -> (B, tables, dim).
struct Method {
  std::string name;
  std::vector<torch::nn::Module*> modules;
  std::function<at::Tensor(const at::Tensor&)> forward;
};

}  // namespace

struct EmbeddingBagBenchmark::Impl {
  EmbeddingBagBenchmarkOptions options;
  std::vector<int64_t> sizes;
  std::vector<TTMEmbeddingBag> ttm;                  // per table; null below min_rows
  std::vector<torch::nn::EmbeddingBag> small;        // per table; null from min_rows up
  std::vector<torch::nn::EmbeddingBag> dense, sparse;  // every table dense (when options.dense)
  std::vector<Method> methods;
};

EmbeddingBagBenchmark::EmbeddingBagBenchmark(const EmbeddingBagBenchmarkOptions& options)
    : impl_(std::make_unique<Impl>()) {
  if (options.repeats < 1) throw Error("embedding-bag benchmark: repeats must be >= 1");
  Impl& m = *impl_;
  m.options = options;
  m.sizes = scaled_criteo_table_sizes(options.scale);
  if (options.big_only)
    m.sizes.erase(std::remove_if(m.sizes.begin(), m.sizes.end(),
                                 [&](int64_t rows) { return rows < options.min_rows; }),
                  m.sizes.end());
  at::manual_seed(options.seed);
  for (const int64_t rows : m.sizes) {
    const bool tt = rows >= options.min_rows;
    m.ttm.push_back(tt ? TTMEmbeddingBag(TTMEmbeddingBagOptions(rows, options.dim).cores(options.cores).rank(options.rank))
                       : TTMEmbeddingBag(nullptr));
    m.small.push_back(tt ? torch::nn::EmbeddingBag(nullptr)
                         : torch::nn::EmbeddingBag(torch::nn::EmbeddingBagOptions(rows, options.dim).mode(torch::kSum)));
    if (options.dense) {
      m.dense.emplace_back(torch::nn::EmbeddingBagOptions(rows, options.dim).mode(torch::kSum));
      m.sparse.emplace_back(torch::nn::EmbeddingBagOptions(rows, options.dim).mode(torch::kSum).sparse(true));
    }
  }
  if (ttm_tables() == 0)
    throw Error("embedding-bag benchmark: no table has --min-rows " + std::to_string(options.min_rows) +
                " rows at --scale " + std::to_string(options.scale) + " (lower --min-rows)");
  auto tt_method = [&m](const std::string& name, bool naive) {
    Method method{name, {}, {}};
    for (size_t t = 0; t < m.sizes.size(); ++t)
      method.modules.push_back(m.ttm[t] ? static_cast<torch::nn::Module*>(m.ttm[t].get()) : m.small[t].get());
    method.forward = [&m, naive](const at::Tensor& ids) {
      const auto offsets = at::arange(ids.size(0), at::kLong);
      std::vector<at::Tensor> out;
      for (size_t t = 0; t < m.sizes.size(); ++t) {
        const auto column = ids.select(1, static_cast<int64_t>(t)).contiguous();
        if (!m.ttm[t]) out.push_back(m.small[t]->forward(column, offsets));
        else out.push_back(naive ? m.ttm[t]->forward_naive(column, offsets) : m.ttm[t]->forward(column, offsets));
      }
      return at::stack(out, 1);
    };
    return method;
  };
  auto dense_method = [&m](const std::string& name, std::vector<torch::nn::EmbeddingBag>& tables) {
    Method method{name, {}, {}};
    for (auto& table : tables) method.modules.push_back(table.get());
    method.forward = [&tables](const at::Tensor& ids) {
      const auto offsets = at::arange(ids.size(0), at::kLong);
      std::vector<at::Tensor> out;
      for (size_t t = 0; t < tables.size(); ++t)
        out.push_back(tables[t]->forward(ids.select(1, static_cast<int64_t>(t)).contiguous(), offsets));
      return at::stack(out, 1);
    };
    return method;
  };
  m.methods = {tt_method("TTM optimised", false), tt_method("TTM naive", true)};
  if (options.dense) {
    m.methods.push_back(dense_method("dense EmbeddingBag", m.dense));
    m.methods.push_back(dense_method("dense, sparse grad", m.sparse));
  }
}

EmbeddingBagBenchmark::~EmbeddingBagBenchmark() = default;

const std::vector<int64_t>& EmbeddingBagBenchmark::table_sizes() const { return impl_->sizes; }

int64_t EmbeddingBagBenchmark::ttm_tables() const {
  int64_t n = 0;
  for (const auto& t : impl_->ttm) n += static_cast<bool>(t);
  return n;
}

int64_t EmbeddingBagBenchmark::ttm_params() const {
  int64_t n = 0;
  for (const auto* m : impl_->methods.front().modules)
    for (const auto& p : m->parameters()) n += p.numel();
  return n;
}

int64_t EmbeddingBagBenchmark::dense_params() const {
  int64_t rows = 0;
  for (const int64_t r : impl_->sizes) rows += r;
  return rows * impl_->options.dim;
}

EmbeddingBagBatchResult EmbeddingBagBenchmark::run(int64_t batch,
                                                   const std::function<void(const std::string&)>& on_method) {
  if (batch < 1) throw Error("embedding-bag benchmark: a batch needs at least one example");
  Impl& m = *impl_;
  EmbeddingBagBatchResult r;
  r.batch = batch;
  r.lookups = batch * static_cast<int64_t>(m.sizes.size());
  Rng rng(m.options.seed * 1000003 + static_cast<uint64_t>(batch));
  std::vector<at::Tensor> columns;
  for (size_t t = 0; t < m.sizes.size(); ++t) {
    columns.push_back(zipf_column(rng, m.sizes[t], batch, m.options.zipf));
    if (m.ttm[t]) r.distinct_ids += std::get<0>(at::_unique2(columns.back())).numel();
  }
  const auto ids = at::stack(columns, 1);
  const auto grad = at::randn({batch, static_cast<int64_t>(m.sizes.size()), m.options.dim});
  {
    at::NoGradGuard no_grad;
    r.max_abs_diff = (m.methods[0].forward(ids) - m.methods[1].forward(ids)).abs().max().item<double>();
  }
  for (const auto& method : m.methods) {
    if (on_method) on_method(method.name);
    const auto measured = measure_forward_backward(method.modules, [&] { return method.forward(ids); }, grad,
                                                   m.options.warmup, m.options.repeats);
    r.methods.push_back({method.name, measured.time, measured.held_bytes, measured.peak_bytes});
  }
  auto ms = [&](const EmbeddingBagMethodResult& x) {
    return m.options.cpu_clock ? x.time.cpu_median_ms : x.time.median_ms;
  };
  const auto naive = r.methods[1];
  for (auto& x : r.methods) {
    x.speedup_vs_naive = ms(naive) / ms(x);
    x.peak_ratio_naive_over_this = static_cast<double>(naive.peak_bytes) / static_cast<double>(std::max<int64_t>(1, x.peak_bytes));
  }
  return r;
}

nlohmann::json EmbeddingBagBatchResult::to_json() const {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& x : methods)
    rows.push_back({{"batch", batch}, {"lookups", lookups}, {"distinct_ttm_ids", distinct_ids},
                    {"method", x.method}, {"median_ms", x.time.median_ms}, {"min_ms", x.time.min_ms},
                    {"max_ms", x.time.max_ms}, {"cpu_ms", x.time.cpu_median_ms},
                    {"speedup_vs_naive", x.speedup_vs_naive}, {"held_after_forward_bytes", x.held_bytes},
                    {"peak_bytes", x.peak_bytes}, {"peak_memory_ratio_naive_over_this", x.peak_ratio_naive_over_this},
                    {"max_abs_diff_optimised_vs_naive", max_abs_diff}});
  return rows;
}

nlohmann::json EmbeddingBagBenchmark::to_json(const std::vector<EmbeddingBagBatchResult>& batches) const {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& b : batches)
    for (const auto& row : b.to_json()) rows.push_back(row);
  const auto& o = impl_->options;
  return {{"benchmark", "embedding_bag"}, {"table_sizes", impl_->sizes}, {"scale", o.scale},
          {"ttm_tables", ttm_tables()}, {"min_rows", o.min_rows}, {"big_only", o.big_only}, {"cores", o.cores}, {"rank", o.rank},
          {"dim", o.dim}, {"ttm_params", ttm_params()}, {"dense_params", dense_params()},
          {"zipf_s", o.zipf}, {"seed", o.seed}, {"repeats", o.repeats}, {"warmup", o.warmup},
          {"ratio_clock", o.cpu_clock ? "cpu" : "wall"},
          {"memory", "CPU tensor bytes via LibTorch's allocator, above the step's start"},
          {"rows", rows}};
}

}  // namespace comera
