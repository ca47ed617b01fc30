#include "core/training/fused_adamw.h"

#include "core/kernels/cpu/adamw_step.h"
#include "core/kernels/fast_kernels.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <type_traits>

namespace comera {

namespace {

struct Update {
  double lr, beta1, beta2, eps, decay, bias1, bias2_sqrt;
  bool amsgrad;
};

template <typename T>
void adamw_kernel(T* p, const T* g, T* m, T* v, T* vmax, int64_t n, const Update& u) {
  const T decay = static_cast<T>(1 - u.lr * u.decay), b1 = static_cast<T>(u.beta1),
          b2 = static_cast<T>(u.beta2), c1 = static_cast<T>(1 - u.beta1),
          c2 = static_cast<T>(1 - u.beta2), eps = static_cast<T>(u.eps),
          step = static_cast<T>(u.lr / u.bias1), inv_bias2 = static_cast<T>(1 / u.bias2_sqrt);
  const bool vectorised = std::is_same_v<T, float> && cpu::adamw_step_available();
  at::parallel_for(0, n, 16384, [&](int64_t begin, int64_t end) {
    if constexpr (std::is_same_v<T, float>)
      if (vectorised)
        return cpu::adamw_step(p + begin, g + begin, m + begin, v + begin,
                               vmax ? vmax + begin : nullptr, end - begin,
                               {decay, b1, b2, c1, c2, eps, step, inv_bias2});
    for (int64_t i = begin; i < end; ++i) {
      const T gi = g[i];
      const T pi = p[i] * decay;
      const T mi = b1 * m[i] + c1 * gi;
      T vi = b2 * v[i] + c2 * gi * gi;
      m[i] = mi;
      v[i] = vi;
      if (vmax) vi = vmax[i] = std::max(vmax[i], vi);
      p[i] = pi - step * mi / (std::sqrt(vi) * inv_bias2 + eps);
    }
  });
}

bool fusable(const at::Tensor& p) {
  return fast_kernels_enabled() && p.device().is_cpu() && p.is_contiguous() &&
         p.grad().is_contiguous() && p.grad().scalar_type() == p.scalar_type() &&
         (p.scalar_type() == at::kFloat || p.scalar_type() == at::kDouble);
}

void fused_update(at::Tensor& p, torch::optim::AdamWParamState& s, const Update& u) {
  // Loaded or sliced moments are normally contiguous already; the kernel relies on it.
  s.exp_avg(s.exp_avg().contiguous());
  s.exp_avg_sq(s.exp_avg_sq().contiguous());
  if (u.amsgrad) s.max_exp_avg_sq(s.max_exp_avg_sq().contiguous());
  const auto& g = p.grad();
  auto vmax = u.amsgrad ? s.max_exp_avg_sq() : at::Tensor();
  if (p.scalar_type() == at::kFloat)
    adamw_kernel<float>(p.data_ptr<float>(), g.data_ptr<float>(), s.exp_avg().data_ptr<float>(),
                        s.exp_avg_sq().data_ptr<float>(),
                        vmax.defined() ? vmax.data_ptr<float>() : nullptr, p.numel(), u);
  else
    adamw_kernel<double>(p.data_ptr<double>(), g.data_ptr<double>(),
                         s.exp_avg().data_ptr<double>(), s.exp_avg_sq().data_ptr<double>(),
                         vmax.defined() ? vmax.data_ptr<double>() : nullptr, p.numel(), u);
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
      const Update u{o.lr(), beta1, beta2, o.eps(), o.weight_decay(),
                     1 - std::pow(beta1, k), std::sqrt(1 - std::pow(beta2, k)), o.amsgrad()};
      if (fusable(p))
        fused_update(p, s, u);
      else
        composite_update(p, s, u);
    }
  }
  return loss;
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

}  // namespace comera
