#include "core/layers/ttm_embedding_bag.h"

#include "core/formats/factorize.h"
#include "core/formats/ttm_shape.h"
#include "core/layers/ttm_lookup.h"
#include "core/util/error.h"

#include <ATen/ATen.h>

#include <ostream>

namespace comera {

namespace {

constexpr const char* kLayer = "TTMEmbeddingBag";

// The table's options: given modes and ranks, or the automatic ones.
TTMEmbeddingOptions table_options(const TTMEmbeddingBagOptions& o) {
  if (o.vocab_modes().empty() != o.emb_modes().empty())
    throw Error(std::string(kLayer) + ": give both vocab_modes and emb_modes, or neither (then "
                "both are chosen automatically)");
  auto v = o.vocab_modes(), e = o.emb_modes();
  if (v.empty()) {
    if (o.num_embeddings() < 1 || o.embedding_dim() < 1 || o.cores() < 1)
      throw Error(std::string(kLayer) + ": " + std::to_string(o.num_embeddings()) + " rows of " +
                  std::to_string(o.embedding_dim()) + " in " + std::to_string(o.cores()) +
                  " cores; every one must be >= 1");
    auto modes = propose_ttm_modes(o.num_embeddings(), o.embedding_dim(), static_cast<int>(o.cores()));
    v = modes.vocab_modes;
    e = modes.emb_modes;
  }
  auto ranks = o.ranks();
  if (ranks.empty()) ranks = TTMShape::uniform(o.num_embeddings(), v, e, o.rank()).ranks();
  const TTMShape shape(o.num_embeddings(), v, e, ranks);
  if (shape.dim() != o.embedding_dim())
    throw Error(std::string(kLayer) + ": emb_modes [" + join_dims(e) + "] multiply to " +
                std::to_string(shape.dim()) + ", not embedding_dim " +
                std::to_string(o.embedding_dim()) + " (choose emb_modes whose product is it)");
  return TTMEmbeddingOptions(o.num_embeddings(), v, e, ranks).threshold(o.threshold()).dedup(o.dedup());
}

// Bag starts (B) for at::embedding_bag, from 1-D indices with offsets or 2-D indices without.
at::Tensor bag_offsets(const at::Tensor& indices, const at::Tensor& offsets, bool include_last) {
  if (indices.dim() == 2) {
    if (offsets.defined())
      throw Error(std::string(kLayer) + ": 2-D indices are one bag per row and take no offsets "
                  "(pass offsets only with 1-D indices)");
    return at::arange(0, indices.numel(), std::max<int64_t>(1, indices.size(1)),
                      indices.options().dtype(at::kLong));
  }
  if (indices.dim() != 1)
    throw Error(std::string(kLayer) + ": indices must be 1-D (with offsets) or 2-D (B, L), got " +
                std::to_string(indices.dim()) + " dimensions");
  if (!offsets.defined() || offsets.dim() != 1)
    throw Error(std::string(kLayer) + ": 1-D indices need 1-D offsets, the start of each bag");
  if (!at::isIntegralType(offsets.scalar_type(), /*includeBool=*/false))
    throw Error(std::string(kLayer) + ": offsets must be an integer tensor (int64)");
  at::Tensor starts = offsets.to(at::kLong);
  if (include_last) {
    if (starts.numel() < 1)
      throw Error(std::string(kLayer) + ": with include_last_offset, offsets needs B+1 entries");
    starts = starts.narrow(0, 0, starts.numel() - 1);
  }
  if (starts.numel() > 0) {
    const bool sorted = starts.numel() < 2 || (starts.narrow(0, 1, starts.numel() - 1) >=
                                               starts.narrow(0, 0, starts.numel() - 1)).all().item<bool>();
    const int64_t first = starts[0].item<int64_t>(), last = starts[-1].item<int64_t>();
    if (first != 0 || !sorted || last > indices.numel())
      throw Error(std::string(kLayer) + ": offsets must start at 0, never decrease and stay within "
                  "the " + std::to_string(indices.numel()) + " indices");
  }
  return starts;
}

}  // namespace

BagMode parse_bag_mode(const std::string& name) {
  if (name == "sum") return BagMode::Sum;
  if (name == "mean") return BagMode::Mean;
  throw Error("bag mode '" + name + "' is not known (use sum or mean)");
}

const char* bag_mode_name(BagMode mode) { return mode == BagMode::Sum ? "sum" : "mean"; }

TTMEmbeddingBagImpl::TTMEmbeddingBagImpl(TTMEmbeddingBagOptions options_) : options(std::move(options_)) {
  reset();
}

void TTMEmbeddingBagImpl::reset() {
  auto table = table_options(options);
  // The resolved shape, for a reader of the options.
  options.vocab_modes(table.vocab_modes()).emb_modes(table.emb_modes()).ranks(table.ranks());
  table_ = register_module("table", TTMEmbedding(std::move(table)));
}

at::Tensor TTMEmbeddingBagImpl::forward(const at::Tensor& indices, const at::Tensor& offsets,
                                        const at::Tensor& per_sample_weights) {
  return pooled(indices, offsets, per_sample_weights, false);
}

at::Tensor TTMEmbeddingBagImpl::forward_naive(const at::Tensor& indices, const at::Tensor& offsets,
                                              const at::Tensor& per_sample_weights) {
  return pooled(indices, offsets, per_sample_weights, true);
}

at::Tensor TTMEmbeddingBagImpl::pooled(const at::Tensor& indices, const at::Tensor& offsets,
                                       const at::Tensor& per_sample_weights, bool naive) {
  const at::Tensor flat = checked_flat_ids(indices, table_->shape().vocab(), kLayer);
  const at::Tensor starts = bag_offsets(indices, offsets, options.include_last_offset());
  if (per_sample_weights.defined()) {
    if (options.mode() != BagMode::Sum)
      throw Error(std::string(kLayer) + ": per_sample_weights need mode sum (mode is " +
                  bag_mode_name(options.mode()) + ")");
    if (per_sample_weights.sizes() != indices.sizes())
      throw Error(std::string(kLayer) + ": per_sample_weights must have the shape of indices");
  }
  const auto cores = table_->scaled();
  if (flat.numel() == 0) return at::zeros({starts.numel(), options.embedding_dim()}, cores[0].options());
  // Rows of the distinct ids (or of every index), pooled by at::embedding_bag over them: the
  // scatter back to the indices and the sum are one pass, and no (N, dim) copy is made.
  DistinctIds rows_of{flat, {}};
  if (!naive && table_->options.dedup()) rows_of = distinct_ids(flat);
  at::Tensor rows = naive ? naive_rows(cores, flat) : merged_rows(cores, rows_of.unique);
  // LibTorch 1.13's CPU embedding_bag has no bf16 kernel: a bf16 forward pools in float32.
  if (rows.scalar_type() == at::kBFloat16) rows = rows.to(at::kFloat);
  const at::Tensor row_index = rows_of.inverse.defined()
                                   ? rows_of.inverse
                                   : at::arange(flat.numel(), flat.options());
  const c10::optional<at::Tensor> weights =
      per_sample_weights.defined()
          ? c10::optional<at::Tensor>(per_sample_weights.reshape({-1}).to(rows.scalar_type()))
          : c10::nullopt;
  return std::get<0>(at::embedding_bag(rows, row_index, starts, /*scale_grad_by_freq=*/false,
                                       options.mode() == BagMode::Sum ? 0 : 1, /*sparse=*/false,
                                       weights, /*include_last_offset=*/false));
}

void TTMEmbeddingBagImpl::pretty_print(std::ostream& stream) const {
  stream << "comera::TTMEmbeddingBag(rows=" << options.num_embeddings()
         << ", dim=" << options.embedding_dim() << ", mode=" << bag_mode_name(options.mode()) << ")";
}

}  // namespace comera
