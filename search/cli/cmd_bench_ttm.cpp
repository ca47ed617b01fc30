// `comera bench ttm`: the TTM embedding lookup (METHOD §5) against the naive per-token
// contraction and a dense torch::nn::Embedding, forward+backward, time and memory.
#include "core/layers/ttm_embedding.h"
#include "core/util/error.h"
#include "core/util/memory_meter.h"
#include "core/util/random.h"
#include "core/util/timing.h"
#include "search/cli/command.h"
#include "search/environment.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/autograd.h>
#include <torch/nn/modules/embedding.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <sstream>

namespace comera::cli {
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

std::vector<int64_t> parse_sizes(const std::string& text) {
  std::vector<int64_t> sizes;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    try {
      sizes.push_back(std::stoll(item));
    } catch (const std::exception&) {
      throw Error("--ids: '" + item + "' is not a number; give a comma list such as 4096,40000");
    }
    if (sizes.back() < 1) throw Error("--ids: batch sizes must be >= 1, got " + item);
  }
  if (sizes.empty()) throw Error("--ids: give at least one batch size, e.g. 4096,40000");
  return sizes;
}

void clear_grads(torch::nn::Module& module) {
  for (auto& p : module.parameters()) p.mutable_grad() = at::Tensor();
}

struct Method {
  std::string name;
  torch::nn::Module* module;
  std::function<at::Tensor(const at::Tensor&)> forward;
};

struct Measured {
  Timing time;
  int64_t held_bytes = 0, peak_bytes = 0;
};

Measured measure(const Method& m, const at::Tensor& ids, const at::Tensor& grad, int warmup,
                 int repeats) {
  Measured out;
  {
    clear_grads(*m.module);
    CpuMemoryMeter meter;
    at::Tensor y = m.forward(ids);
    out.held_bytes = meter.live_extra_bytes();
    y.backward(grad);
    out.peak_bytes = meter.peak_extra_bytes();
  }
  out.time = time_median(
      [&](int) {
        clear_grads(*m.module);
        m.forward(ids).backward(grad);
      },
      warmup, repeats);
  return out;
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
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
      "json", "Machine-readable output");
  auto parsed = parse(options, argc, argv);
  if (!parsed) return 0;
  const auto& r = *parsed;
  const auto sizes = parse_sizes(r["ids"].as<std::string>());
  const int repeats = r["repeats"].as<int>(), warmup = r["warmup"].as<int>();
  const double s = r["zipf"].as<double>();
  const uint64_t seed = r["seed"].as<uint64_t>();
  const bool json = r.count("json") > 0;
  if (repeats < 1) throw Error("--repeats must be >= 1");
  const std::string clock = r["clock"].as<std::string>();
  if (clock != "wall" && clock != "cpu")
    throw Error("--clock must be 'wall' or 'cpu', got '" + clock + "'");
  auto ms = [&](const Measured& m) { return clock == "cpu" ? m.time.cpu_median_ms : m.time.median_ms; };
  std::ostream& log = json ? std::cerr : std::cout;

  at::manual_seed(static_cast<uint64_t>(seed));
  TTMEmbedding ttm(TTMEmbeddingOptions(kVocab, {16, 20, 10, 10}, {4, 4, 8, 6}, {1, 32, 32, 32, 1}));
  torch::nn::Embedding dense(kVocab, ttm->shape().dim());
  int64_t ttm_params = 0;
  for (const auto& p : ttm->parameters()) ttm_params += p.numel();
  std::vector<Method> methods{
      {"optimised, dedup", ttm.get(),
       [&](const at::Tensor& ids) {
         ttm->options.dedup(true);
         return ttm->forward(ids);
       }},
      {"optimised, no dedup", ttm.get(),
       [&](const at::Tensor& ids) {
         ttm->options.dedup(false);
         return ttm->forward(ids);
       }},
      {"naive", ttm.get(), [&](const at::Tensor& ids) { return ttm->forward_naive(ids); }},
      {"dense nn::Embedding", dense.get(),
       [&](const at::Tensor& ids) { return dense->forward(ids); }}};

  log << "comera bench ttm: TTM " << ttm->shape().str() << " (" << ttm_params
      << " parameters with rank vectors) vs dense " << kVocab << "x" << ttm->shape().dim() << " ("
      << dense->weight.numel() << ")\n"
      << "ids: Zipf(s=" << s << ") over the vocabulary, frequency ranks shuffled over ids (seed "
      << seed << ")\n"
      << "time: forward+backward, median of " << repeats << " after " << warmup << " warm-up, "
      << at::get_num_threads() << " threads; wall and cpu (process CPU time, all threads); "
      << "ratios from " << clock << " time\n"
      << "memory: CPU tensor bytes through LibTorch's allocator above the step's start: held after "
         "forward (output + saved for backward) and peak during forward+backward\n\n";
  if (!json) {
    std::cout << "     ids  distinct  method                 median ms    cpu ms  naive/this  "
                 "dense/this   held MB   peak MB  naive/this peak\n";
  }
  nlohmann::json rows = nlohmann::json::array();
  for (const int64_t n : sizes) {
    const at::Tensor ids = zipf_ids(n, s, seed);
    const int64_t distinct = std::get<0>(at::_unique2(ids)).numel();
    const at::Tensor grad = at::randn({n, ttm->shape().dim()});
    double diff = 0;
    {
      at::NoGradGuard no_grad;
      diff = (ttm->forward(ids) - ttm->forward_naive(ids)).abs().max().item<double>();
    }
    std::vector<Measured> results;
    for (const auto& m : methods) {
      log << "  measuring " << n << " ids: " << m.name << " ..." << std::endl;
      results.push_back(measure(m, ids, grad, warmup, repeats));
    }
    const Measured& naive = results[2];
    const Measured& dense_result = results[3];
    for (size_t i = 0; i < methods.size(); ++i) {
      const Measured& x = results[i];
      const double vs_naive = ms(naive) / ms(x);
      const double vs_dense = ms(dense_result) / ms(x);
      const double mem_vs_naive = static_cast<double>(naive.peak_bytes) / x.peak_bytes;
      rows.push_back({{"ids", n},
                      {"distinct_ids", distinct},
                      {"method", methods[i].name},
                      {"median_ms", x.time.median_ms},
                      {"min_ms", x.time.min_ms},
                      {"max_ms", x.time.max_ms},
                      {"cpu_ms", x.time.cpu_median_ms},
                      {"speedup_vs_naive", vs_naive},
                      {"speedup_vs_dense", vs_dense},
                      {"held_after_forward_bytes", x.held_bytes},
                      {"peak_bytes", x.peak_bytes},
                      {"peak_memory_ratio_naive_over_this", mem_vs_naive},
                      {"max_abs_diff_optimised_vs_naive", diff}});
      if (json) continue;
      std::string name = methods[i].name;
      name.resize(22, ' ');
      std::printf("%8lld  %8lld  %s %10s %9s  %10s  %10s %9s %9s  %15s\n",
                  static_cast<long long>(n), static_cast<long long>(distinct), name.c_str(),
                  fixed(x.time.median_ms, 1).c_str(), fixed(x.time.cpu_median_ms, 1).c_str(),
                  fixed(vs_naive, 2).c_str(), fixed(vs_dense, 2).c_str(),
                  fixed(x.held_bytes / 1e6, 1).c_str(), fixed(x.peak_bytes / 1e6, 1).c_str(),
                  fixed(mem_vs_naive, 2).c_str());
    }
    if (!json) std::printf("          (optimised vs naive output: max |diff| %.2e)\n", diff);
  }
  if (json) {
    nlohmann::json out = {{"benchmark", "ttm_lookup"},
                          {"shape", ttm->shape().str()},
                          {"vocab", kVocab},
                          {"zipf_s", s},
                          {"seed", seed},
                          {"repeats", repeats},
                          {"ratio_clock", clock},
                          {"warmup", warmup},
                          {"memory", "CPU tensor bytes via LibTorch's allocator, above the step's start"},
                          {"environment", current_environment().to_json()},
                          {"rows", rows}};
    std::cout << out.dump(2) << std::endl;
  }
  return 0;
}

Register reg("bench ttm", "TTM embedding lookup: optimised vs naive vs dense (time, memory)", run);

}  // namespace
}  // namespace comera::cli
