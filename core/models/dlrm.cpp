#include "core/models/dlrm.h"

#include "core/layers/ttm_embedding_bag.h"
#include "core/util/error.h"

#include <ATen/ATen.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>

#include <cmath>
#include <ostream>

namespace comera {

namespace {

// The reference's initialisation of a dense layer: W ~ N(0, sqrt(2/(in+out))), b ~ N(0, sqrt(1/out)).
void reference_init(const LinearLayer& layer, int64_t in, int64_t out) {
  auto* dense = dynamic_cast<torch::nn::LinearImpl*>(layer.module().get());
  if (!dense) return;
  at::NoGradGuard no_grad;
  dense->weight.normal_(0, std::sqrt(2.0 / static_cast<double>(in + out)));
  dense->bias.normal_(0, std::sqrt(1.0 / static_cast<double>(out)));
}

// Table t's lookup of one id per example: bags of one.
template <class Bag>
std::function<at::Tensor(const at::Tensor&)> one_id_bags(Bag* bag) {
  return [bag](const at::Tensor& ids) { return bag->forward(ids, at::arange(ids.size(0), ids.options())); };
}

}  // namespace

at::Tensor dot_interaction(const at::Tensor& vectors) {
  const int64_t v = vectors.size(1);
  const auto z = at::bmm(vectors, vectors.transpose(1, 2)).reshape({vectors.size(0), v * v});
  // tril_indices lists (i, j), j < i, row by row: the reference's order.
  const auto lower = at::tril_indices(v, v, -1, at::TensorOptions(at::kLong).device(vectors.device()));
  return z.index_select(1, lower[0] * v + lower[1]);
}

DlrmImpl::DlrmImpl(DlrmConfig config) : config_(std::move(config)) {
  const auto& c = config_;
  for (const auto& layer : c.mlp_layers()) {
    const auto it = c.tt_mlp.find(layer.name);
    LinearLayer l(layer.in, layer.out, it == c.tt_mlp.end() ? LinearSpec{} : it->second, c.rank_threshold);
    reference_init(l, layer.in, layer.out);
    register_module(layer.name, l.module());
    (layer.name.rfind("bottom", 0) == 0 ? bottom_ : top_).push_back(std::move(l));
  }
  for (size_t t = 0; t < c.table_sizes.size(); ++t) {
    const int64_t rows = c.table_sizes[t];
    const auto name = "table" + std::to_string(t);
    // The reference draws U(±sqrt(1/rows)); a TTM table is scaled to the same spread.
    const double bound = std::sqrt(1.0 / static_cast<double>(rows));
    if (c.tensorized_table(t)) {
      TTMEmbeddingBag bag(TTMEmbeddingBagOptions(rows, c.embedding_dim)
                              .cores(c.tables.cores)
                              .rank(c.tables.rank)
                              .threshold(c.rank_threshold));
      {
        // TTM entries start with variance 1; U(±b) has variance b²/3, shared over the cores.
        at::NoGradGuard no_grad;
        auto cores = bag->table().cores();
        const double scale = std::pow(bound / std::sqrt(3.0), 1.0 / static_cast<double>(cores.size()));
        for (auto& core : cores) core.mul_(scale);
      }
      register_module(name, bag);
      tables_.push_back(one_id_bags(bag.get()));
      continue;
    }
    torch::nn::EmbeddingBag bag(torch::nn::EmbeddingBagOptions(rows, c.embedding_dim)
                                     .mode(torch::kSum)
                                     .sparse(c.sparse_gradients));
    {
      at::NoGradGuard no_grad;
      bag->weight.uniform_(-bound, bound);
    }
    register_module(name, bag);
    tables_.push_back(one_id_bags(bag.get()));
  }
}

at::Tensor DlrmImpl::forward(const at::Tensor& dense, const at::Tensor& sparse) {
  const auto& c = config_;
  if (dense.dim() != 2 || dense.size(1) != c.dense_features)
    throw Error("DLRM: dense features must be (B, " + std::to_string(c.dense_features) + ")");
  if (sparse.dim() != 2 || sparse.size(1) != static_cast<int64_t>(tables_.size()) ||
      sparse.size(0) != dense.size(0))
    throw Error("DLRM: sparse features must be (B, " + std::to_string(tables_.size()) +
                "), one id per table, for the same B as the dense ones");
  at::Tensor x = dense;
  for (const auto& layer : bottom_) x = at::relu(layer(x));
  std::vector<at::Tensor> vectors = {x};
  for (size_t t = 0; t < tables_.size(); ++t) vectors.push_back(tables_[t](sparse.select(1, static_cast<int64_t>(t)).contiguous()));
  x = at::cat({x, dot_interaction(at::stack(vectors, 1))}, 1);
  for (size_t i = 0; i < top_.size(); ++i) {
    x = top_[i](x);
    if (i + 1 < top_.size()) x = at::relu(x);
  }
  return x.squeeze(1);
}

void DlrmImpl::pretty_print(std::ostream& stream) const {
  int64_t tt = 0;
  for (size_t t = 0; t < config_.table_sizes.size(); ++t) tt += config_.tensorized_table(t);
  stream << "comera::Dlrm(tables=" << config_.table_sizes.size() << " (" << tt
         << " TTM), dim=" << config_.embedding_dim << ", interaction=" << config_.interaction_width() << ")";
}

}  // namespace comera
