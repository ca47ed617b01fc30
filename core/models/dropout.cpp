#include "core/models/dropout.h"

#include "core/kernels/cpu/apply_mask.h"
#include "core/kernels/fast_kernels.h"
#include "core/kernels/dropout_mask.h"

#include <ATen/ATen.h>
#include <torch/autograd.h>

namespace comera {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The mask (p and seed) for backward, which redraws it.
void save_mask(AutogradContext* ctx, const DropoutMask& mask) {
  ctx->saved_data["p"] = mask.p();
  ctx->saved_data["seed"] = static_cast<int64_t>(mask.seed());
}

DropoutMask saved_mask(AutogradContext* ctx) {
  return DropoutMask(ctx->saved_data["p"].toDouble(),
                     static_cast<uint64_t>(ctx->saved_data["seed"].toInt()));
}

class Dropout : public torch::autograd::Function<Dropout> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, double p) {
    const DropoutMask mask(p);
    save_mask(ctx, mask);
    return cpu::apply_mask(mask, x);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    return {cpu::apply_mask(saved_mask(ctx), grads[0]), at::Tensor()};
  }
};

class ResidualDropout : public torch::autograd::Function<ResidualDropout> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& f, double p) {
    const DropoutMask mask(p);
    save_mask(ctx, mask);
    return cpu::apply_mask(mask, f, x);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    return {grads[0], cpu::apply_mask(saved_mask(ctx), grads[0]), at::Tensor()};
  }
};

bool fast(const at::Tensor& t) { return fast_kernels_enabled() && cpu::maskable(t); }

}  // namespace

at::Tensor fast_dropout(const at::Tensor& x, double p, bool train) {
  if (!train || p <= 0) return x;
  if (p >= 1) return at::dropout(x, p, train);
  if (fast(x)) return Dropout::apply(x, p);
  return x * DropoutMask(p).multipliers_like(x);
}

at::Tensor residual_dropout(const at::Tensor& x, const at::Tensor& f, double p, bool train) {
  if (!train || p <= 0) return x + f;
  if (p < 1 && fast(x) && fast(f) && x.sizes() == f.sizes() && x.scalar_type() == f.scalar_type())
    return ResidualDropout::apply(x, f, p);
  return x + fast_dropout(f, p, train);
}

}  // namespace comera
