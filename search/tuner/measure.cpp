#include "search/tuner/measure.h"

#include "core/layers/tt_linear.h"
#include "core/util/accelerator.h"
#include "core/util/device.h"
#include "core/util/error.h"
#include "core/util/timing.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <c10/core/GradMode.h>
#include <torch/nn/modules/linear.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <sstream>

namespace comera::tuner {

namespace {

struct Sample {
  double forward_ms, total_ms;
};

// The layers built for measuring draw their initial values from the default generator; the
// caller's random stream (a seeded training run) must not notice.
class KeepDefaultGenerator {
 public:
  KeepDefaultGenerator() : gen_(at::detail::getDefaultCPUGenerator()) {
    std::lock_guard<std::mutex> lock(gen_.mutex());
    state_ = gen_.get_state();
  }
  ~KeepDefaultGenerator() {
    std::lock_guard<std::mutex> lock(gen_.mutex());
    gen_.set_state(state_);
  }

 private:
  at::Generator gen_;
  at::Tensor state_;
};

double wall_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

Clock parse_clock(const std::string& name) {
  if (name == "wall") return Clock::Wall;
  if (name == "cpu") return Clock::Cpu;
  throw Error("clock '" + name + "': use wall (what training waits for) or cpu (process CPU time)");
}

std::vector<Measurement> measure(const std::vector<Candidate>& candidates, const TTShape& shape,
                                 int64_t tokens, at::ScalarType dtype, const MeasureOptions& options,
                                 const std::function<void(const std::string&)>& progress) {
  at::AutoGradMode grad(true);
  const KeepDefaultGenerator keep;
  const int64_t in = shape.in_features(), out = shape.out_features();
  TTLinear layer(TTLinearOptions(shape.in_modes(), shape.out_modes(), shape.ranks()));
  torch::nn::Linear dense(in, out);
  const auto device = parse_device(options.device, "tuner device");
  require_device(device);
  if (!device.is_cpu() && options.clock == Clock::Cpu)
    throw Error("clock cpu: process CPU time does not see a GPU's work (use the wall clock with " +
                device.str() + ")");
  layer->to(device, dtype);
  dense->to(device, dtype);
  auto gen = at::make_generator<at::CPUGeneratorImpl>(options.seed);
  const auto opts = at::TensorOptions().dtype(dtype);
  std::vector<at::Tensor> xs, dys;
  for (int i = 0; i < std::max(1, options.rotate); ++i) {
    xs.push_back(at::randn({tokens, in}, gen, opts).to(device).requires_grad_());
    dys.push_back(at::randn({tokens, out}, gen, opts).to(device));
  }

  // On a GPU the wall clock reads after the device has caught up (queued work counts).
  const std::function<double()> now =
      options.clock == Clock::Wall ? std::function<double()>([&device] { synchronize(device); return wall_ms(); })
                                   : std::function<double()>(process_cpu_ms);
  auto run = [&](const Candidate& c, int i) {
    const auto& x = xs[i % xs.size()];
    torch::nn::Module& m = c.reference ? static_cast<torch::nn::Module&>(*dense) : *layer;
    for (auto& p : m.parameters()) p.mutable_grad() = at::Tensor();
    x.mutable_grad() = at::Tensor();
    if (!c.reference) layer->set_plan(c.plan);
    const double t0 = now();
    at::Tensor y = c.reference ? dense->forward(x) : layer->forward(x);
    const double f = now() - t0;
    y.backward(dys[i % dys.size()]);
    return Sample{f, now() - t0};
  };

  const size_t n = candidates.size();
  std::vector<Measurement> result(n);
  std::vector<std::vector<Sample>> samples(n);
  std::vector<size_t> active;
  std::vector<double> firsts(n, INFINITY);
  double best = INFINITY;
  for (size_t c = 0; c < n; ++c) {
    if (candidates[c].cost.peak > options.max_peak) {
      std::ostringstream why;
      why << "model peak " << candidates[c].cost.peak << " elements exceeds " << options.max_peak;
      result[c].skipped = why.str();
      continue;
    }
    if (progress) progress(candidates[c].name + " " + candidates[c].text);
    // Warm-up runs are timed too: the fastest first run guards pruning against one outlier. A
    // slow first run that is already far behind the best is the candidate's only timing.
    const Sample cold = run(candidates[c], 0);
    double first = cold.total_ms;
    firsts[c] = first;
    active.push_back(c);
    if (first > options.slow_ms && first > options.abandon * best) {
      samples[c].push_back(cold);
      continue;
    }
    for (int w = 1; w < options.warmup && first <= options.slow_ms; ++w)
      first = std::min(first, run(candidates[c], w).total_ms);
    samples[c].push_back(run(candidates[c], options.warmup));
    firsts[c] = std::min(first, samples[c].back().total_ms);
    best = std::min(best, firsts[c]);
  }
  // Clearly slower candidates keep their one timing; the rest (always the merged path, which
  // every decision is measured against) share the budget.
  active.erase(std::remove_if(active.begin(), active.end(),
                              [&](size_t c) {
                                return candidates[c].name != kMerged && firsts[c] > options.abandon * best;
                              }),
               active.end());
  double round_ms = 0;
  for (size_t c : active) round_ms += firsts[c];
  const int repeats = std::clamp(static_cast<int>(options.budget_ms / std::max(round_ms, 1e-3)),
                                 options.min_repeats, std::max(options.min_repeats, options.max_repeats));
  std::mt19937_64 rng(options.seed);
  for (int r = 1; r < repeats; ++r) {
    std::shuffle(active.begin(), active.end(), rng);
    for (size_t c : active) samples[c].push_back(run(candidates[c], options.warmup + r));
  }

  for (size_t c = 0; c < n; ++c) {
    if (samples[c].empty()) continue;
    std::vector<double> f, t;
    for (const auto& s : samples[c]) f.push_back(s.forward_ms), t.push_back(s.total_ms);
    auto& m = result[c];
    m.runs_ms = t;
    m.forward_ms = median(f);
    m.total_ms = median(t);
    m.backward_ms = m.total_ms - m.forward_ms;
    m.repeats = static_cast<int>(samples[c].size());
  }
  return result;
}

}  // namespace comera::tuner
