#include "core/training/fused_adamw.h"

#include "core/training/optimizer_groups.h"
#include "core/training/optimizer_kind.h"
#include "core/training/train_config.h"
#include "core/util/config_reader.h"
#include "core/util/error.h"

#include "core/kernels/cpu/adamw_step.h"
#include "core/kernels/fast_kernels.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <type_traits>

namespace comera {

namespace {

struct Update {
  double lr, beta1, beta2, eps, decay, bias1, bias2_sqrt;
  bool amsgrad;
};

// One parameter's fused update, its state made contiguous and its constants for this step.
struct FusedJob {
  at::Tensor p, g, m, v, vmax;  // vmax undefined without amsgrad
  Update u;
};

// Entries [begin, end) of one job.
template <typename T>
void adamw_range(const FusedJob& job, int64_t begin, int64_t end) {
  const Update& u = job.u;
  const T decay = static_cast<T>(1 - u.lr * u.decay), b1 = static_cast<T>(u.beta1),
          b2 = static_cast<T>(u.beta2), c1 = static_cast<T>(1 - u.beta1),
          c2 = static_cast<T>(1 - u.beta2), eps = static_cast<T>(u.eps),
          step = static_cast<T>(u.lr / u.bias1), inv_bias2 = static_cast<T>(1 / u.bias2_sqrt);
  T* p = job.p.data_ptr<T>() + begin;
  const T* g = job.g.data_ptr<T>() + begin;
  T* m = job.m.data_ptr<T>() + begin;
  T* v = job.v.data_ptr<T>() + begin;
  T* vmax = job.vmax.defined() ? job.vmax.data_ptr<T>() + begin : nullptr;
  const int64_t n = end - begin;
  if constexpr (std::is_same_v<T, float>)
    if (cpu::adamw_step_available())
      return cpu::adamw_step(p, g, m, v, vmax, n, {decay, b1, b2, c1, c2, eps, step, inv_bias2});
  for (int64_t i = 0; i < n; ++i) {
    const T gi = g[i];
    const T pi = p[i] * decay;
    const T mi = b1 * m[i] + c1 * gi;
    T vi = b2 * v[i] + c2 * gi * gi;
    m[i] = mi;
    v[i] = vi;
    if (vmax) vi = vmax[i] = std::max(vmax[i], vi);
    p[i] = pi - step * mi / (std::sqrt(vi) * inv_bias2 + eps);
  }
}

// All fused parameters in one parallel region, the threads splitting their entries evenly: most
// of a tensorized model's hundreds of parameters are too small to split one by one, and a
// region per parameter would cost more than its update.
void run_fused(const std::vector<FusedJob>& jobs) {
  std::vector<int64_t> offsets{0};
  for (const auto& job : jobs) offsets.push_back(offsets.back() + job.p.numel());
  const int64_t total = offsets.back();
  const int threads = total >= (int64_t{1} << 16) ? at::get_num_threads() : 1;
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    const int64_t lo = total * t / nt, hi = total * (t + 1) / nt;
    size_t i = std::upper_bound(offsets.begin(), offsets.end(), lo) - offsets.begin() - 1;
    for (; i < jobs.size() && offsets[i] < hi; ++i) {
      const int64_t begin = std::max(lo, offsets[i]) - offsets[i];
      const int64_t end = std::min(hi, offsets[i + 1]) - offsets[i];
      if (begin >= end) continue;
      if (jobs[i].p.scalar_type() == at::kFloat)
        adamw_range<float>(jobs[i], begin, end);
      else
        adamw_range<double>(jobs[i], begin, end);
    }
  }
}

bool fusable(const at::Tensor& p) {
  return fast_kernels_enabled() && p.device().is_cpu() && p.is_contiguous() &&
         p.grad().is_contiguous() && p.grad().scalar_type() == p.scalar_type() &&
         (p.scalar_type() == at::kFloat || p.scalar_type() == at::kDouble);
}

FusedJob fused_job(at::Tensor& p, torch::optim::AdamWParamState& s, const Update& u) {
  // Loaded or sliced moments are normally contiguous already; the kernel relies on it.
  s.exp_avg(s.exp_avg().contiguous());
  s.exp_avg_sq(s.exp_avg_sq().contiguous());
  if (u.amsgrad) s.max_exp_avg_sq(s.max_exp_avg_sq().contiguous());
  return {p, p.grad(), s.exp_avg(), s.exp_avg_sq(), u.amsgrad ? s.max_exp_avg_sq() : at::Tensor(), u};
}

// The stock step's ATen ops for one parameter: any device and dtype, no host synchronisation.
void composite_update(at::Tensor& p, torch::optim::AdamWParamState& s, const Update& u) {
  const auto& g = p.grad();
  if (u.decay != 0) p.mul_(1 - u.lr * u.decay);
  s.exp_avg().mul_(u.beta1).add_(g, 1 - u.beta1);
  s.exp_avg_sq().mul_(u.beta2).addcmul_(g, g, 1 - u.beta2);
  if (u.amsgrad) at::maximum_out(s.max_exp_avg_sq(), s.exp_avg_sq(), s.max_exp_avg_sq());
  const auto& second = u.amsgrad ? s.max_exp_avg_sq() : s.exp_avg_sq();
  p.addcdiv_(s.exp_avg(), (second.sqrt() / u.bias2_sqrt).add_(u.eps), -u.lr / u.bias1);
}

}  // namespace

torch::Tensor FusedAdamW::step(LossClosure closure) {
  at::NoGradGuard no_grad;
  torch::Tensor loss;
  if (closure) {
    at::AutoGradMode enable_grad(true);
    loss = closure();
  }
  std::vector<FusedJob> jobs;
  for (auto& group : param_groups()) {
    const auto& o = static_cast<const torch::optim::AdamWOptions&>(group.options());
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      TORCH_CHECK(!p.grad().is_sparse(), "AdamW does not support sparse gradients");
      auto& slot = state()[state_key(p)];
      if (!slot) {
        auto s = std::make_unique<torch::optim::AdamWParamState>();
        s->step(0);
        s->exp_avg(at::zeros_like(p, at::MemoryFormat::Preserve));
        s->exp_avg_sq(at::zeros_like(p, at::MemoryFormat::Preserve));
        if (o.amsgrad()) s->max_exp_avg_sq(at::zeros_like(p, at::MemoryFormat::Preserve));
        slot = std::move(s);
      }
      auto& s = static_cast<torch::optim::AdamWParamState&>(*slot);
      s.step(s.step() + 1);
      const double beta1 = std::get<0>(o.betas()), beta2 = std::get<1>(o.betas());
      const auto k = static_cast<double>(s.step());
      const auto factor = rate_factors_.find(p.unsafeGetTensorImpl());
      const double lr = factor == rate_factors_.end() ? o.lr() : o.lr() * factor->second;
      const Update u{lr, beta1, beta2, o.eps(), o.weight_decay(),
                     1 - std::pow(beta1, k), std::sqrt(1 - std::pow(beta2, k)), o.amsgrad()};
      if (fusable(p))
        jobs.push_back(fused_job(p, s, u));
      else
        composite_update(p, s, u);
    }
  }
  run_fused(jobs);
  return loss;
}

void FusedAdamW::set_rate_factors(const std::vector<at::Tensor>& params,
                                  const std::vector<double>& factors) {
  TORCH_CHECK(params.size() == factors.size(), "FusedAdamW: one rate factor per parameter");
  rate_factors_.clear();
  for (size_t i = 0; i < params.size(); ++i) rate_factors_[params[i].unsafeGetTensorImpl()] = factors[i];
}

void FusedAdamW::slice_state(const std::vector<ParamSlice>& slices) {
  for (const auto& slice : slices) {
    auto it = state_.find(state_key(slice.param));
    if (it == state_.end()) continue;  // never stepped: no moments yet
    auto& s = static_cast<torch::optim::AdamWParamState&>(*it->second);
    s.exp_avg(sliced(s.exp_avg(), slice));
    s.exp_avg_sq(sliced(s.exp_avg_sq(), slice));
    if (s.max_exp_avg_sq().defined()) s.max_exp_avg_sq(sliced(s.max_exp_avg_sq(), slice));
  }
}

nlohmann::json read_adam_moments(const ConfigReader& o) {
  nlohmann::json out = {{"betas", {0.9, 0.999}}, {"eps", o.number("eps", 1e-8)}};
  if (o.has("betas")) {
    const auto& b = o.value("betas");
    if (!b.is_array() || b.size() != 2 || !b[0].is_number() || !b[1].is_number() ||
        b[0].get<double>() < 0 || b[0].get<double>() >= 1 || b[1].get<double>() < 0 ||
        b[1].get<double>() >= 1)
      throw Error(o.key_path("betas") + ": expected two numbers in [0, 1), got " + b.dump() +
                  " (e.g. [0.9, 0.999])");
    out["betas"] = b;
  }
  return out;
}

torch::optim::AdamWOptions adam_options(const nlohmann::json& s, double lr, double weight_decay) {
  return torch::optim::AdamWOptions(lr)
      .betas({s.at("betas")[0].get<double>(), s.at("betas")[1].get<double>()})
      .eps(s.at("eps").get<double>())
      .weight_decay(weight_decay)
      .amsgrad(s.value("amsgrad", false));
}

namespace {

class AdamWKind : public OptimizerKind {
 public:
  std::string name() const override { return "adamw"; }
  nlohmann::json read(const ConfigReader& o) const override {
    auto s = read_adam_moments(o);
    s["amsgrad"] = o.boolean("amsgrad", false);
    // Written only when set, so configs recorded before these keys keep their identity.
    if (o.choice("core_rates", "uniform", {"uniform", "relative"}) == "relative") s["core_rates"] = "relative";
    if (o.has("lr_embedding_cores")) s["lr_embedding_cores"] = o.number("lr_embedding_cores", 0);
    return s;
  }
  std::unique_ptr<torch::optim::Optimizer> make(const torch::nn::Module&, const ParameterGroups& groups,
                                                const OptimizerConfig& config) const override {
    const auto settings = config.complete_settings();
    const auto options = adam_options(settings, config.lr_other, config.weight_decay);
    auto optimizer = std::make_unique<FusedAdamW>(torch_groups(groups, config.rates(), options), options);
    const bool relative = settings.value("core_rates", "uniform") == "relative";
    const bool embedding = settings.contains("lr_embedding_cores");
    if (relative || embedding) {
      const double ratio = embedding ? settings.at("lr_embedding_cores").get<double>() / config.lr_cores : 1;
      if (embedding && !(config.lr_cores > 0))
        throw Error("training.optimizer.lr_embedding_cores is a rate beside lr_cores, which is " +
                    std::to_string(config.lr_cores) + ": set lr_cores above 0");
      std::vector<double> factors;
      for (size_t i = 0; i < groups.cores.size(); ++i)
        factors.push_back((relative ? groups.core_scales[i] : 1.0) * (groups.embedding_cores[i] ? ratio : 1.0));
      optimizer->set_rate_factors(groups.cores, factors);
    }
    return optimizer;
  }
};

}  // namespace

std::shared_ptr<const OptimizerKind> adamw_kind() { return std::make_shared<AdamWKind>(); }

}  // namespace comera
