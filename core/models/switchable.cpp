#include "core/models/switchable.h"

#include "core/layers/low_rank_linear.h"
#include "core/layers/lte_linear.h"
#include "core/layers/tt_linear.h"
#include "core/layers/ttm_embedding.h"

#include <torch/nn/init.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>

#include <cmath>

namespace comera {

LinearLayer::LinearLayer(int64_t in, int64_t out, const LinearSpec& spec, double threshold) {
  if (spec.tensorized) {
    TTLinear tt(TTLinearOptions(spec.in_modes, spec.out_modes, spec.ranks).threshold(threshold));
    module_ = tt.ptr();
    forward_ = [m = tt.get()](const at::Tensor& x) { return m->forward(x); };
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
  forward_ = [m = dense.get()](const at::Tensor& x) { return m->forward(x); };
}

EmbeddingLayer::EmbeddingLayer(int64_t vocab, int64_t dim, const EmbeddingSpec& spec,
                               double threshold) {
  if (spec.tensorized) {
    TTMEmbedding ttm(
        TTMEmbeddingOptions(vocab, spec.vocab_modes, spec.emb_modes, spec.ranks).threshold(threshold));
    module_ = ttm.ptr();
    forward_ = [m = ttm.get()](const at::Tensor& ids) { return m->forward(ids); };
    table_ = [m = ttm.get()]() { return m->table(); };
    return;
  }
  torch::nn::Embedding dense(torch::nn::EmbeddingOptions(vocab, dim));
  module_ = dense.ptr();
  forward_ = [m = dense.get()](const at::Tensor& ids) { return m->forward(ids); };
  table_ = [m = dense.get()]() { return m->weight; };
}

}  // namespace comera
