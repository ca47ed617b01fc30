#include "core/models/chunked_cross_entropy.h"

#include "core/kernels/fast_kernels.h"
#include "core/util/error.h"
#include "core/util/precision.h"

#include <ATen/ATen.h>
#include <torch/autograd.h>

#include <algorithm>

namespace comera {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The summed loss and the correct count over all rows; with `grads`, also the gradients of the
// mean loss in h, table and bias.
struct Pass {
  at::Tensor loss_sum, correct, grad_h, grad_table, grad_bias;
};

Pass chunked_pass(const at::Tensor& h, const at::Tensor& table, const at::Tensor& bias,
                  const at::Tensor& targets, int64_t rows, bool grads) {
  const int64_t n = h.size(0);
  Pass p;
  p.loss_sum = at::zeros({}, h.options());
  p.correct = at::zeros({}, targets.options());
  if (grads) {
    p.grad_h = at::empty_like(h, at::MemoryFormat::Contiguous);
    p.grad_table = at::zeros_like(table, at::MemoryFormat::Contiguous);
    p.grad_bias = at::zeros_like(bias, at::MemoryFormat::Contiguous);
  }
  for (int64_t start = 0; start < n; start += rows) {
    const int64_t c = std::min(rows, n - start);
    const auto hc = h.narrow(0, start, c);
    const auto tc = targets.narrow(0, start, c).unsqueeze(1);
    auto logits = at::addmm(bias, hc, table.t());
    const auto lse = logits.logsumexp(1, /*keepdim=*/true);
    p.loss_sum += (lse - logits.gather(1, tc)).sum();
    p.correct += (logits.argmax(1, /*keepdim=*/true) == tc).sum();
    if (!grads) continue;
    // d loss_row / d logits = softmax - one_hot(target), made in place of the logits.
    logits.sub_(lse).exp_().scatter_add_(1, tc, at::full({c, 1}, -1.0, logits.options()));
    auto grad_rows = p.grad_h.narrow(0, start, c);
    at::mm_out(grad_rows, logits, table);
    p.grad_table.addmm_(logits.t(), hc);
    p.grad_bias += logits.sum(0);
  }
  if (grads) {
    const double inv = 1.0 / static_cast<double>(n);
    p.grad_h.mul_(inv);
    p.grad_table.mul_(inv);
    p.grad_bias.mul_(inv);
  }
  return p;
}

// Forward computes the gradients along with the loss; backward only scales them.
class ChunkedCrossEntropy : public torch::autograd::Function<ChunkedCrossEntropy> {
 public:
  static variable_list forward(AutogradContext* ctx, const at::Tensor& h, const at::Tensor& table,
                               const at::Tensor& bias, const at::Tensor& targets, int64_t rows) {
    auto p = chunked_pass(h, table, bias, targets, rows, /*grads=*/true);
    ctx->saved_data["grad_h"] = p.grad_h;
    ctx->saved_data["grad_table"] = p.grad_table;
    ctx->saved_data["grad_bias"] = p.grad_bias;
    ctx->mark_non_differentiable({p.correct});
    return {p.loss_sum / static_cast<double>(h.size(0)), p.correct};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto& g = grads[0];
    return {ctx->saved_data["grad_h"].toTensor() * g, ctx->saved_data["grad_table"].toTensor() * g,
            ctx->saved_data["grad_bias"].toTensor() * g, at::Tensor(), at::Tensor()};
  }
};

}  // namespace

VocabLoss chunked_cross_entropy(const at::Tensor& h, const at::Tensor& table, const at::Tensor& bias,
                                const at::Tensor& targets, int64_t chunk_elements) {
  if (h.dim() != 2 || table.dim() != 2 || bias.dim() != 1 || targets.dim() != 1 ||
      h.size(1) != table.size(1) || bias.size(0) != table.size(0) || targets.size(0) != h.size(0) ||
      h.size(0) == 0)
    throw Error("chunked_cross_entropy: expected h (N, d), table (V, d), bias (V), targets (N), N >= 1");
  // A loss is float32 in a bf16 forward too: its softmax runs over the whole vocabulary.
  if (lower_precision_forward(h.device())) {
    const ForwardPrecision fp32(Precision::Fp32);
    return chunked_cross_entropy(float_activation(h), float_activation(table), float_activation(bias), targets,
                                 chunk_elements);
  }
  if (!fast_kernels_enabled()) {
    const auto logits = at::addmm(bias, h, table.t());
    return {at::cross_entropy_loss(logits, targets), (logits.argmax(-1) == targets).sum()};
  }
  const int64_t rows = std::max<int64_t>(1, chunk_elements / table.size(0));
  const bool grads = at::GradMode::is_enabled() &&
                     (h.requires_grad() || table.requires_grad() || bias.requires_grad());
  if (!grads) {
    const auto p = chunked_pass(h, table, bias, targets, rows, /*grads=*/false);
    return {p.loss_sum / static_cast<double>(h.size(0)), p.correct};
  }
  const auto out = ChunkedCrossEntropy::apply(h, table, bias, targets, rows);
  return {out[0], out[1]};
}

}  // namespace comera
