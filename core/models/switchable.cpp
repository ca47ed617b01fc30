#include "core/models/switchable.h"

#include "core/layers/low_rank_linear.h"
#include "core/layers/lte_linear.h"
#include "core/layers/tt_linear.h"
#include "core/layers/ttm_linear.h"
#include "core/layers/ttm_embedding.h"
#include "core/contract/merged_path.h"
#include "core/kernels/cpu/thin_gemm.h"
#include "core/util/step_parts.h"

#include <ATen/record_function.h>

#include <torch/nn/init.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>

#include <algorithm>
#include <cmath>

namespace comera {

namespace {

using step_parts::kLinear;

// Opens the part's profiling scope around forward; `flops` (forward and backward of the call)
// is evaluated only while a profile counts.
template <typename Forward, typename Flops>
std::function<at::Tensor(const at::Tensor&)> in_scope(step_parts::Part part, Forward forward, Flops flops) {
  return [part, forward, flops](const at::Tensor& x) {
    RECORD_USER_SCOPE(step_parts::scope_name(part));
    if (step_parts::counting()) step_parts::add_flops(part, flops(x));
    return forward(x);
  };
}

// Rows a linear layer sees: every position of x but the last dimension.
double rows(const at::Tensor& x) { return static_cast<double>(x.numel() / std::max<int64_t>(1, x.size(-1))); }

}  // namespace

LinearLayer::LinearLayer(int64_t in, int64_t out, const LinearSpec& spec, double threshold) {
  if (spec.tensorized && spec.format == "ttm") {
    TTMLinear ttm(TTMLinearOptions(spec.in_modes, spec.out_modes, spec.ranks).threshold(threshold));
    module_ = ttm.ptr();
    // Forming W (its GEMMs), then x W as a dense layer; forward once, backward twice.
    forward_ = in_scope(
        kLinear, [m = ttm.get()](const at::Tensor& x) { return m->forward(x); },
        [m = ttm.get(), in, out](const at::Tensor& x) {
          return 6.0 * (static_cast<double>(m->weight_macs()) + rows(x) * static_cast<double>(in * out));
        });
    return;
  }
  if (spec.tensorized) {
    TTLinear tt(TTLinearOptions(spec.in_modes, spec.out_modes, spec.ranks).threshold(threshold));
    module_ = tt.ptr();
    tt_ = tt.get();
    flops_ = [m = tt.get()](const at::Tensor& x) {
      if (m->plan()) return 0.0;  // a tuner's plan: not counted (its cost is the plan's own)
      return 2.0 * static_cast<double>(merged_path_macs(m->chain().core_sizes(), m->shape().ranks(),
                                                         static_cast<int64_t>(rows(x)), thin::enabled()));
    };
    forward_ = in_scope(kLinear, [m = tt.get()](const at::Tensor& x) { return m->forward(x); }, flops_);
    return;
  }
  if (spec.low_rank > 0) {
    LowRankLinear low(LowRankLinearOptions(in, out, spec.low_rank));
    module_ = low.ptr();
    forward_ = [m = low.get()](const at::Tensor& x) { return m->forward(x); };
    return;
  }
  if (spec.lte.rank > 0) {
    const auto& l = spec.lte;
    LteLinear lte(LteLinearOptions(in, out, l.rank).heads(l.heads).alpha(l.alpha).merge_steps(l.merge_steps));
    module_ = lte.ptr();
    forward_ = [m = lte.get()](const at::Tensor& x) { return m->forward(x); };
    return;
  }
  torch::nn::Linear dense(torch::nn::LinearOptions(in, out));
  {
    at::NoGradGuard no_grad;
    dense->weight.normal_(0, std::sqrt(1.0 / static_cast<double>(in + out)));
    const double bound = 1.0 / std::sqrt(static_cast<double>(out));
    dense->bias.uniform_(-bound, bound);
  }
  module_ = dense.ptr();
  forward_ = in_scope(
      kLinear, [m = dense.get()](const at::Tensor& x) { return m->forward(x); },
      [in, out](const at::Tensor& x) { return 6.0 * rows(x) * static_cast<double>(in * out); });
}

std::vector<at::Tensor> LinearLayer::shared_input(const at::Tensor& x,
                                                  const std::vector<const LinearLayer*>& layers) {
  std::vector<at::Tensor> out;
  if (!std::all_of(layers.begin(), layers.end(), [](const LinearLayer* l) { return l->tt_; })) {
    for (const auto* l : layers) out.push_back((*l)(x));
    return out;
  }
  RECORD_USER_SCOPE(step_parts::scope_name(kLinear));
  std::vector<TTLinearImpl*> tt;
  for (const auto* l : layers) {
    if (step_parts::counting()) step_parts::add_flops(kLinear, l->flops_(x));
    tt.push_back(l->tt_);
  }
  return tt_linear_shared_input(x, tt);
}

EmbeddingLayer::EmbeddingLayer(int64_t vocab, int64_t dim, const EmbeddingSpec& spec,
                               double threshold) {
  if (spec.tensorized) {
    TTMEmbedding ttm(
        TTMEmbeddingOptions(vocab, spec.vocab_modes, spec.emb_modes, spec.ranks).threshold(threshold));
    module_ = ttm.ptr();
    forward_ = in_scope(
        step_parts::kEmbedding, [m = ttm.get()](const at::Tensor& ids) { return m->forward(ids); },
        [](const at::Tensor&) { return 0.0; });
    table_ = [m = ttm.get()]() { return m->table(); };
    return;
  }
  torch::nn::Embedding dense(torch::nn::EmbeddingOptions(vocab, dim));
  module_ = dense.ptr();
  forward_ = in_scope(
      step_parts::kEmbedding, [m = dense.get()](const at::Tensor& ids) { return m->forward(ids); },
      [](const at::Tensor&) { return 0.0; });
  table_ = [m = dense.get()]() { return m->weight; };
}

}  // namespace comera
