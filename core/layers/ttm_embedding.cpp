#include "core/layers/ttm_embedding.h"

#include "core/layers/ttm_lookup.h"
#include "core/util/error.h"

#include <ATen/ATen.h>

#include <cmath>
#include <ostream>

namespace comera {

TTMEmbeddingImpl::TTMEmbeddingImpl(TTMEmbeddingOptions options_) : options(std::move(options_)) {
  reset();
}

void TTMEmbeddingImpl::reset() {
  shape_ = TTMShape(options.vocab(), options.vocab_modes(), options.emb_modes(), options.ranks());
  register_ttm_chain(*this, shape_, cores_, rank_vectors_);
  reset_parameters();
}

void TTMEmbeddingImpl::reset_parameters() {
  at::NoGradGuard no_grad;
  // An entry of the table sums prod_{k<d} r_k products of d core entries, so
  // sigma_k = 1/sqrt(r_k) (right rank) gives it variance 1 whatever the ranks.
  const auto& r = shape_.ranks();
  init_scales_.clear();
  for (size_t k = 0; k < cores_.size(); ++k) {
    init_scales_.push_back(1.0 / std::sqrt(static_cast<double>(r[k + 1])));
    cores_[k].normal_(0, init_scales_.back());
  }
  for (auto& d : rank_vectors_) d.fill_(1);
}

at::Tensor TTMEmbeddingImpl::forward(const at::Tensor& ids) {
  const at::Tensor flat = checked_flat_ids(ids, shape_.vocab(), "TTMEmbedding");
  const auto distinct = options.dedup() ? distinct_ids(flat) : DistinctIds{flat, {}};
  auto rows = merged_rows(scaled(), distinct.unique);
  if (distinct.inverse.defined()) rows = rows.index_select(0, distinct.inverse);
  auto sizes = ids.sizes().vec();
  sizes.push_back(shape_.dim());
  return rows.view(sizes);
}

at::Tensor TTMEmbeddingImpl::table() {
  return merged_rows(scaled(), at::arange(shape_.vocab(), at::TensorOptions(at::kLong)));
}

std::vector<at::Tensor> TTMEmbeddingImpl::scaled() const {
  return scaled_cores(cores_, rank_vectors_, options.threshold());
}

at::Tensor TTMEmbeddingImpl::forward_naive(const at::Tensor& ids) {
  const at::Tensor flat = checked_flat_ids(ids, shape_.vocab(), "TTMEmbedding");
  auto sizes = ids.sizes().vec();
  sizes.push_back(shape_.dim());
  return naive_rows(scaled(), flat).view(sizes);
}

TruncationResult TTMEmbeddingImpl::truncate(bool fold) {
  auto result = truncate_chain(cores_, rank_vectors_, options.threshold(), fold);
  options.ranks(result.ranks_after);
  shape_ = TTMShape(options.vocab(), options.vocab_modes(), options.emb_modes(), result.ranks_after);
  return result;
}

void TTMEmbeddingImpl::pretty_print(std::ostream& stream) const {
  stream << "comera::TTMEmbedding(vocab=" << shape_.vocab() << ", dim=" << shape_.dim()
         << ", modes=[" << join_dims(shape_.vocab_modes()) << "]x[" << join_dims(shape_.emb_modes())
         << "], ranks=[" << join_dims(shape_.ranks()) << "], dedup="
         << (options.dedup() ? "true" : "false") << ")";
}

}  // namespace comera
