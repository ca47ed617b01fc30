#include "core/models/dropout.h"

#include "core/models/dropout_mask.h"

#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <torch/autograd.h>

#include <algorithm>
#include <vector>

namespace comera {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Elements per mask buffer; parallel work comes in 8 chunks at least (as many elements as one
// small parallel region is worth).
constexpr int64_t kChunk = 2048;

bool fusable(const at::Tensor& t) {
  return t.device().is_cpu() && (t.scalar_type() == at::kFloat || t.scalar_type() == at::kDouble);
}

// x + mask ⊙ f (x may be undefined: mask ⊙ f), contiguous.
at::Tensor masked(const DropoutMask& mask, const at::Tensor& f, const at::Tensor& x) {
  const auto fc = f.contiguous();
  const auto xc = x.defined() ? x.contiguous() : x;
  auto out = at::empty(fc.sizes(), fc.options());
  const int64_t n = fc.numel();
  AT_DISPATCH_FLOATING_TYPES(fc.scalar_type(), "comera_dropout", [&] {
    const scalar_t* fp = fc.data_ptr<scalar_t>();
    const scalar_t* xp = xc.defined() ? xc.data_ptr<scalar_t>() : nullptr;
    scalar_t* op = out.data_ptr<scalar_t>();
    at::parallel_for(0, (n + kChunk - 1) / kChunk, 8, [&](int64_t c0, int64_t c1) {
      scalar_t m[kChunk];
      for (int64_t c = c0; c < c1; ++c) {
        const int64_t begin = c * kChunk, count = std::min(kChunk, n - begin);
        mask.multipliers(begin, count, m);
        const scalar_t* fb = fp + begin;
        scalar_t* ob = op + begin;
        if (xp) {
          const scalar_t* xb = xp + begin;
          for (int64_t j = 0; j < count; ++j) ob[j] = xb[j] + m[j] * fb[j];
        } else {
          for (int64_t j = 0; j < count; ++j) ob[j] = m[j] * fb[j];
        }
      }
    });
  });
  return out;
}

void save_mask(AutogradContext* ctx, double p, const DropoutMask& mask) {
  ctx->saved_data["p"] = p;
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
    save_mask(ctx, p, mask);
    return masked(mask, x, at::Tensor());
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    return {masked(saved_mask(ctx), grads[0], at::Tensor()), at::Tensor()};
  }
};

class ResidualDropout : public torch::autograd::Function<ResidualDropout> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& f, double p) {
    const DropoutMask mask(p);
    save_mask(ctx, p, mask);
    return masked(mask, f, x);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    return {grads[0], masked(saved_mask(ctx), grads[0], at::Tensor()), at::Tensor()};
  }
};

// d scores = P ⊙ (m ⊙ g - <m ⊙ g, P>) row by row, with m the mask times 1/(1-p).
template <typename T>
void softmax_dropout_backward(const DropoutMask& mask, const T* P, const T* g, T* out,
                              int64_t rows, int64_t n) {
  at::parallel_for(0, rows, std::max<int64_t>(1, 8 * kChunk / n), [&](int64_t r0, int64_t r1) {
    std::vector<T> m(static_cast<size_t>(n));
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t o = r * n;
      mask.multipliers(o, n, m.data());
      T acc[8] = {};  // independent partial sums, so the dot product is not one long chain
      int64_t j = 0;
      for (; j + 8 <= n; j += 8)
        for (int k = 0; k < 8; ++k) {
          m[j + k] *= g[o + j + k];
          acc[k] += m[j + k] * P[o + j + k];
        }
      for (; j < n; ++j) {
        m[j] *= g[o + j];
        acc[0] += m[j] * P[o + j];
      }
      T dot = 0;
      for (T a : acc) dot += a;
      for (j = 0; j < n; ++j) out[o + j] = P[o + j] * (m[j] - dot);
    }
  });
}

class SoftmaxDropout : public torch::autograd::Function<SoftmaxDropout> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& scores, double p) {
    const DropoutMask mask(p);
    save_mask(ctx, p, mask);
    const auto probs = at::softmax(scores, -1).contiguous();
    ctx->save_for_backward({probs});
    return masked(mask, probs, at::Tensor());
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto probs = ctx->get_saved_variables()[0];
    const auto g = grads[0].contiguous();
    auto out = at::empty(probs.sizes(), probs.options());
    const int64_t n = probs.size(-1), rows = n > 0 ? probs.numel() / n : 0;
    const auto mask = saved_mask(ctx);
    AT_DISPATCH_FLOATING_TYPES(probs.scalar_type(), "comera_softmax_dropout", [&] {
      softmax_dropout_backward<scalar_t>(mask, probs.data_ptr<scalar_t>(), g.data_ptr<scalar_t>(),
                                         out.data_ptr<scalar_t>(), rows, n);
    });
    return {out, at::Tensor()};
  }
};

}  // namespace

at::Tensor fast_dropout(const at::Tensor& x, double p, bool train) {
  if (!train || p <= 0) return x;
  if (p >= 1 || !fusable(x)) return at::dropout(x, p, train);
  return Dropout::apply(x, p);
}

at::Tensor residual_dropout(const at::Tensor& x, const at::Tensor& f, double p, bool train) {
  if (!train || p <= 0) return x + f;
  if (p >= 1 || !fusable(x) || !fusable(f) || x.sizes() != f.sizes() ||
      x.scalar_type() != f.scalar_type())
    return x + fast_dropout(f, p, train);
  return ResidualDropout::apply(x, f, p);
}

at::Tensor softmax_dropout(const at::Tensor& scores, double p, bool train) {
  if (!train || p <= 0) return at::softmax(scores, -1);
  if (p >= 1 || !fusable(scores)) return fast_dropout(at::softmax(scores, -1), p, train);
  return SoftmaxDropout::apply(scores, p);
}

}  // namespace comera
