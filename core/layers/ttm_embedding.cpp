#include "core/layers/ttm_embedding.h"

#include "core/layers/ttm_lookup.h"
#include "core/util/error.h"

#include <ATen/ATen.h>

#include <cmath>
#include <limits>
#include <ostream>

namespace comera {

namespace {

int64_t product(const std::vector<int64_t>& v, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= v[i];
  return p;
}

// ids of any integer dtype, flattened to int64 and checked against the vocabulary.
at::Tensor checked_flat_ids(const at::Tensor& ids, int64_t vocab) {
  if (!ids.defined()) throw Error("TTMEmbedding: the ids tensor is undefined");
  if (!at::isIntegralType(ids.scalar_type(), /*includeBool=*/false))
    throw Error(std::string("TTMEmbedding: ids must be an integer tensor (int64), got ") +
                c10::toString(ids.scalar_type()) + "; convert them with .to(torch::kLong)");
  at::Tensor flat = ids.reshape({-1}).to(at::kLong);
  if (flat.numel() == 0) return flat;
  // A host read on a device (one per lookup): a bad id must be an error, not an out-of-bounds
  // gather.
  const auto minmax = at::aminmax(flat);
  const int64_t lo = std::get<0>(minmax).item<int64_t>(), hi = std::get<1>(minmax).item<int64_t>();
  if (lo < 0 || hi >= vocab)
    throw Error("TTMEmbedding: id " + std::to_string(lo < 0 ? lo : hi) +
                " is out of range for a vocabulary of " + std::to_string(vocab) +
                " (valid ids are 0.." + std::to_string(vocab - 1) +
                "); check the tokenizer's vocabulary size against the layer's");
  return flat;
}

// Cores with each masked rank vector folded into the core on its left.
std::vector<at::Tensor> scaled_cores(const std::vector<at::Tensor>& cores,
                                     const std::vector<at::Tensor>& rank_vectors, double threshold) {
  std::vector<at::Tensor> out = cores;
  for (size_t k = 0; k < rank_vectors.size(); ++k)
    out[k] = cores[k] * masked_rank_vector(rank_vectors[k], threshold).view({1, 1, 1, -1});
  return out;
}

// Product of cores [begin, end) as one core (r_begin, prod v, prod e, r_end).
at::Tensor merged_core(const std::vector<at::Tensor>& cores, size_t begin, size_t end) {
  at::Tensor t = cores[begin];
  for (size_t k = begin + 1; k < end; ++k) {
    const at::Tensor& c = cores[k];
    const int64_t r0 = t.size(0), v = t.size(1), e = t.size(2), r = c.size(0);
    t = at::mm(t.reshape({r0 * v * e, r}), c.reshape({r, -1}))
            .view({r0, v, e, c.size(1), c.size(2), c.size(3)})
            .permute({0, 1, 3, 2, 4, 5})
            .reshape({r0, v * c.size(1), e * c.size(2), c.size(3)});
  }
  return t;
}

// (r0, v, e, r1) -> (v, r0, e, r1): each vocabulary index's slice contiguous.
at::Tensor lookup_layout(const at::Tensor& core) { return core.permute({1, 0, 2, 3}).contiguous(); }

// Index into the table covering vocabulary modes [begin, end).
at::Tensor table_index(const at::Tensor& flat, const std::vector<int64_t>& modes, size_t begin,
                       size_t end) {
  return flat.div(product(modes, end, modes.size()), "trunc").remainder(product(modes, begin, end));
}

}  // namespace

TTMEmbeddingImpl::TTMEmbeddingImpl(TTMEmbeddingOptions options_) : options(std::move(options_)) {
  reset();
}

void TTMEmbeddingImpl::reset() {
  shape_ = TTMShape(options.vocab(), options.vocab_modes(), options.emb_modes(), options.ranks());
  cores_.clear();
  rank_vectors_.clear();
  const auto& r = shape_.ranks();
  for (int64_t k = 0; k < shape_.d(); ++k)
    cores_.push_back(register_parameter(
        "core" + std::to_string(k),
        at::empty({r[k], shape_.vocab_modes()[k], shape_.emb_modes()[k], r[k + 1]})));
  for (int64_t k = 1; k < shape_.d(); ++k)
    rank_vectors_.push_back(register_parameter("rank" + std::to_string(k), at::ones({r[k]})));
  reset_parameters();
}

void TTMEmbeddingImpl::reset_parameters() {
  at::NoGradGuard no_grad;
  // An entry of the table sums prod_{k<d} r_k products of d core entries, so
  // sigma_k = 1/sqrt(r_k) (right rank) gives it variance 1 whatever the ranks.
  const auto& r = shape_.ranks();
  for (size_t k = 0; k < cores_.size(); ++k)
    cores_[k].normal_(0, 1.0 / std::sqrt(static_cast<double>(r[k + 1])));
  for (auto& d : rank_vectors_) d.fill_(1);
}

at::Tensor TTMEmbeddingImpl::forward(const at::Tensor& ids) {
  const at::Tensor flat = checked_flat_ids(ids, shape_.vocab());
  at::Tensor unique = flat, inverse;
  if (options.dedup() && flat.numel() > 1) {
    // Its size is data-dependent: a host read on a device (graph capture needs dedup off).
    auto u = at::_unique2(flat, /*sorted=*/true, /*return_inverse=*/true);
    // Scattering rows back costs about a quarter of computing them (CPU, paper's shape), so
    // dedup only pays when at least a quarter of the ids are repeats.
    if (std::get<0>(u).numel() * 4 <= flat.numel() * 3) {
      unique = std::get<0>(u);
      inverse = std::get<1>(u);
    }
  }
  auto rows = merged_rows(unique);
  if (inverse.defined()) rows = rows.index_select(0, inverse);
  auto sizes = ids.sizes().vec();
  sizes.push_back(shape_.dim());
  return rows.view(sizes);
}

at::Tensor TTMEmbeddingImpl::table() {
  return merged_rows(at::arange(shape_.vocab(), at::TensorOptions(at::kLong)));
}

at::Tensor TTMEmbeddingImpl::merged_rows(const at::Tensor& ids) {
  const auto cores = scaled_cores(cores_, rank_vectors_, options.threshold());
  const auto& modes = shape_.vocab_modes();
  const size_t d = cores.size();
  if (d == 1) return chain_rows({lookup_layout(cores[0])}, {ids});
  // Split the chain where the two merged tables are smallest; each row then costs one
  // (E_left x r) · (r x E_right) product.
  size_t split = 1;
  int64_t best = std::numeric_limits<int64_t>::max();
  for (size_t h = 1; h < d; ++h) {
    const int64_t left = product(modes, 0, h) * product(shape_.emb_modes(), 0, h);
    const int64_t right = product(modes, h, d) * product(shape_.emb_modes(), h, d);
    const int64_t entries = shape_.ranks()[h] * (left + right);
    if (entries < best) best = entries, split = h;
  }
  return pair_rows(lookup_layout(merged_core(cores, 0, split)),
                   lookup_layout(merged_core(cores, split, d)), table_index(ids, modes, 0, split),
                   table_index(ids, modes, split, d));
}

at::Tensor TTMEmbeddingImpl::forward_naive(const at::Tensor& ids) {
  const at::Tensor flat = checked_flat_ids(ids, shape_.vocab());
  const auto cores = scaled_cores(cores_, rank_vectors_, options.threshold());
  std::vector<at::Tensor> tables, idx;
  for (size_t k = 0; k < cores.size(); ++k) {
    tables.push_back(lookup_layout(cores[k]));
    idx.push_back(table_index(flat, shape_.vocab_modes(), k, k + 1));
  }
  auto sizes = ids.sizes().vec();
  sizes.push_back(shape_.dim());
  return chain_rows(tables, idx).view(sizes);
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
