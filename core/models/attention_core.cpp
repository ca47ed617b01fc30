#include "core/models/attention_core.h"

#include "core/kernels/cpu/apply_mask.h"
#include "core/kernels/fast_kernels.h"
#include "core/models/dropout_mask.h"
#include "core/util/error.h"
#include "core/util/step_parts.h"

#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <ATen/record_function.h>
#include <torch/autograd.h>

#include <algorithm>
#include <string>

namespace comera {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// (B, T, h·dh) -> (B, h, T, dh), a view.
at::Tensor heads_view(const at::Tensor& t, int64_t heads) {
  return t.view({t.size(0), t.size(1), heads, t.size(2) / heads}).transpose(1, 2);
}

// out[b] = a[b] @ b[b] for each batch entry, written in place (out may be a strided view).
void batched_products(at::Tensor out, const at::Tensor& a, const at::Tensor& b) {
  RECORD_USER_SCOPE(step_parts::scope_name(step_parts::kAttentionProducts));
  if (step_parts::counting())
    step_parts::add_flops(step_parts::kAttentionProducts,
                          2.0 * static_cast<double>(out.numel() * a.size(-1)));
  for (int64_t i = 0; i < out.size(0); ++i) {
    auto o = out.select(0, i);
    at::bmm_out(o, a.select(0, i), b.select(0, i));
  }
}

// d scores = P ⊙ (m ⊙ g - <m ⊙ g, P>) row by row, m the dropout multipliers and P the
// probabilities; with D = m ⊙ P (the dropped probabilities) that is D ⊙ g - P <g, D>, so the mask
// itself is not needed.
template <typename T>
void softmax_dropout_backward(const T* P, const T* D, const T* g, T* out, int64_t rows, int64_t n) {
  at::parallel_for(0, rows, std::max<int64_t>(1, 16384 / n), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const T *p = P + r * n, *d = D + r * n, *gr = g + r * n;
      T* o = out + r * n;
      T acc[8] = {};  // independent partial sums, so the dot product is not one long chain
      int64_t j = 0;
      for (; j + 8 <= n; j += 8)
        for (int k = 0; k < 8; ++k) acc[k] += gr[j + k] * d[j + k];
      for (; j < n; ++j) acc[0] += gr[j] * d[j];
      T dot = 0;
      for (T a : acc) dot += a;
      for (j = 0; j < n; ++j) o[j] = d[j] * gr[j] - p[j] * dot;
    }
  });
}

class AttentionCore : public torch::autograd::Function<AttentionCore> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& q, const at::Tensor& k,
                            const at::Tensor& v, const at::Tensor& bias, int64_t heads, double p) {
    const auto qc = q.contiguous(), kc = k.contiguous(), vc = v.contiguous();
    const int64_t B = qc.size(0), T = qc.size(1);
    const auto qh = heads_view(qc, heads), kh = heads_view(kc, heads), vh = heads_view(vc, heads);
    auto scores = at::empty({B, heads, T, T}, qc.options());
    batched_products(scores, qh, kh.transpose(-2, -1));
    scores.add_(bias);
    const auto probs = at::softmax(scores, -1).contiguous();
    scores.reset();
    const auto dropped = p > 0 ? cpu::apply_mask(DropoutMask(p), probs) : probs;
    auto context = at::empty(qc.sizes(), qc.options());
    batched_products(heads_view(context, heads), dropped, vh);
    ctx->saved_data["heads"] = heads;
    ctx->save_for_backward({qc, kc, vc, probs, dropped});
    return context;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto &q = saved[0], &k = saved[1], &v = saved[2], &probs = saved[3], &dropped = saved[4];
    const int64_t heads = ctx->saved_data["heads"].toInt();
    const auto qh = heads_view(q, heads), kh = heads_view(k, heads), vh = heads_view(v, heads);
    const auto gh = heads_view(grads[0].contiguous(), heads);
    auto dq = at::empty(q.sizes(), q.options()), dk = at::empty_like(dq), dv = at::empty_like(dq);
    batched_products(heads_view(dv, heads), dropped.transpose(-2, -1), gh);
    auto dprobs = at::empty(probs.sizes(), probs.options());
    batched_products(dprobs, gh, vh.transpose(-2, -1));
    auto dscores = at::empty_like(dprobs);
    const int64_t n = probs.size(-1), rows = probs.numel() / std::max<int64_t>(1, n);
    AT_DISPATCH_FLOATING_TYPES(probs.scalar_type(), "comera_attention_backward", [&] {
      softmax_dropout_backward<scalar_t>(probs.data_ptr<scalar_t>(), dropped.data_ptr<scalar_t>(),
                                         dprobs.data_ptr<scalar_t>(), dscores.data_ptr<scalar_t>(),
                                         rows, n);
    });
    batched_products(heads_view(dq, heads), dscores, kh);
    batched_products(heads_view(dk, heads), dscores.transpose(-2, -1), qh);
    return {dq, dk, dv, at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

// The composite path: the same product in ATen ops under ordinary autograd, the mask made on
// the tensors' device.
at::Tensor composite_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                               const at::Tensor& bias, int64_t heads, double p) {
  const auto qh = heads_view(q.contiguous(), heads), kh = heads_view(k.contiguous(), heads),
             vh = heads_view(v.contiguous(), heads);
  auto probs = at::softmax(at::matmul(qh, kh.transpose(-2, -1)) + bias, -1);
  if (p > 0) probs = probs * DropoutMask(p).multipliers_like(probs);
  return at::matmul(probs, vh).transpose(1, 2).reshape(q.sizes());
}

}  // namespace

at::Tensor attention_core(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                          const at::Tensor& bias, int64_t heads, double p, bool train) {
  if (!(p >= 0 && p < 1))
    throw Error("attention: dropout probability must be in [0, 1), got p = " + std::to_string(p));
  const double rate = train ? p : 0.0;
  RECORD_USER_SCOPE(step_parts::scope_name(step_parts::kAttention));
  if (fast_kernels_enabled() && cpu::maskable(q))
    return AttentionCore::apply(q, k, v, bias, heads, rate);
  return composite_attention(q, k, v, bias, heads, rate);
}

}  // namespace comera
