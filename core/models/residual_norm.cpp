#include "core/models/residual_norm.h"

#include "core/kernels/cpu/bf16_rows.h"
#include "core/kernels/cpu/cpu_features.h"
#include "core/kernels/cpu/layer_norm_rows.h"
#include "core/kernels/fast_kernels.h"
#include "core/models/dropout.h"
#include "core/kernels/dropout_mask.h"
#include "core/util/precision.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/autograd.h>

#include <optional>
#include <vector>

namespace comera {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Rows per parallel task.
constexpr int64_t kGrain = 8;

class ResidualNorm : public torch::autograd::Function<ResidualNorm> {
 public:
  // p > 0: x + dropout(f) with a mask drawn here; p == 0: x + f.
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& f,
                            const at::Tensor& weight, const at::Tensor& bias, double p, double eps) {
    const auto xc = x.contiguous(), fc = f.contiguous(), w = weight.contiguous(), b = bias.contiguous();
    const int64_t D = xc.size(-1), rows = xc.numel() / D;
    std::optional<DropoutMask> mask;
    if (p > 0) mask.emplace(p);
    auto y = at::empty(xc.sizes(), xc.options()), xhat = at::empty_like(y);
    auto rstd = at::empty({rows}, xc.options());
    // A bf16 branch (a bf16 forward's projection) is widened a row at a time, in cache.
    const bool bf16 = fc.scalar_type() == at::kBFloat16;
    const float *xp = xc.data_ptr<float>(), *wp = w.data_ptr<float>(), *bp = b.data_ptr<float>();
    const float* fp = bf16 ? nullptr : fc.data_ptr<float>();
    const at::BFloat16* fh = bf16 ? fc.data_ptr<at::BFloat16>() : nullptr;
    float *yp = y.data_ptr<float>(), *np = xhat.data_ptr<float>(), *sp = rstd.data_ptr<float>();
    const auto e = static_cast<float>(eps);
    at::parallel_for(0, rows, kGrain, [&](int64_t first, int64_t last) {
      std::vector<float> m(mask ? static_cast<size_t>(D) : 0), wide(bf16 ? static_cast<size_t>(D) : 0);
      for (int64_t r = first; r < last; ++r) {
        if (mask) mask->multipliers(r * D, D, m.data());
        if (bf16) cpu::bf16_to_float(fh + r * D, D, 1.0f, wide.data());
        sp[r] = cpu::layer_norm_row(xp + r * D, bf16 ? wide.data() : fp + r * D, mask ? m.data() : nullptr, D,
                                    wp, bp, e, np + r * D, yp + r * D);
      }
    });
    ctx->save_for_backward({xhat, rstd, w});
    ctx->saved_data["bf16_branch"] = bf16;
    ctx->saved_data["p"] = p;
    ctx->saved_data["seed"] = mask ? static_cast<int64_t>(mask->seed()) : int64_t{0};
    return y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto &xhat = saved[0], &rstd = saved[1], &w = saved[2];
    const double p = ctx->saved_data["p"].toDouble();
    std::optional<DropoutMask> mask;
    if (p > 0) mask.emplace(p, static_cast<uint64_t>(ctx->saved_data["seed"].toInt()));
    const auto dy = grads[0].contiguous();
    const int64_t D = xhat.size(-1), rows = xhat.numel() / D;
    // The branch's gradient in the branch's dtype, narrowed a row at a time when it was bf16.
    const bool bf16 = ctx->saved_data["bf16_branch"].toBool();
    auto dx = at::empty(xhat.sizes(), xhat.options());
    auto df = at::empty(xhat.sizes(), xhat.options().dtype(bf16 ? at::kBFloat16 : at::kFloat));
    // Per-thread sums of the weight's and bias's gradients, added after.
    auto partial = at::zeros({at::get_num_threads(), 2, D}, xhat.options());
    const float *dyp = dy.data_ptr<float>(), *np = xhat.data_ptr<float>(),
                *sp = rstd.data_ptr<float>(), *wp = w.data_ptr<float>();
    float *dxp = dx.data_ptr<float>(), *pp = partial.data_ptr<float>();
    float* dfp = bf16 ? nullptr : df.data_ptr<float>();
    at::BFloat16* dfh = bf16 ? df.data_ptr<at::BFloat16>() : nullptr;
    at::parallel_for(0, rows, kGrain, [&](int64_t first, int64_t last) {
      std::vector<float> m(mask ? static_cast<size_t>(D) : 0), wide(bf16 ? static_cast<size_t>(D) : 0);
      float* dw = pp + at::get_thread_num() * 2 * D;
      for (int64_t r = first; r < last; ++r) {
        if (mask) mask->multipliers(r * D, D, m.data());
        cpu::layer_norm_row_backward(dyp + r * D, np + r * D, sp[r], mask ? m.data() : nullptr, D, wp,
                                     dxp + r * D, bf16 ? wide.data() : dfp + r * D, dw, dw + D);
        if (bf16) cpu::float_to_bf16(wide.data(), D, dfh + r * D);
      }
    });
    const auto sums = partial.sum(0);
    return {dx, df, sums[0], sums[1], at::Tensor(), at::Tensor()};
  }
};

bool fused(const at::Tensor& x, const at::Tensor& f, const at::Tensor& weight, const at::Tensor& bias) {
  const auto cpu_float = [](const at::Tensor& t) {
    return t.defined() && t.device().is_cpu() && t.scalar_type() == at::kFloat;
  };
  const bool branch = cpu_float(f) || (f.defined() && f.device().is_cpu() && f.scalar_type() == at::kBFloat16);
  return fast_kernels_enabled() && cpu::cpu_has_avx512f() && cpu_float(x) && branch &&
         cpu_float(weight) && cpu_float(bias) && x.dim() >= 1 && x.sizes() == f.sizes() &&
         weight.numel() == x.size(-1) && bias.numel() == x.size(-1) && x.size(-1) > 0;
}

}  // namespace

at::Tensor residual_layer_norm(const at::Tensor& x, const at::Tensor& f, double p, bool train,
                               const at::Tensor& weight, const at::Tensor& bias, double eps) {
  const double rate = train ? p : 0.0;
  // A bf16 residual stream joins float32 (layer norm is float32, as autocast keeps it); a bf16
  // branch the fused kernel reads as it is.
  if (fast_kernels_enabled() && x.scalar_type() == at::kBFloat16)
    return residual_layer_norm(float_activation(x), f, p, train, weight, bias, eps);
  if (rate < 1 && fused(x, f, weight, bias)) return ResidualNorm::apply(x, f, weight, bias, rate, eps);
  // Layer norm in float32, as autocast does (its weights are float32).
  return at::layer_norm(float_activation(residual_dropout(x, f, p, train)), {x.size(-1)}, weight, bias, eps);
}

}  // namespace comera
