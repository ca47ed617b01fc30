#include "core/layers/tensorized.h"

#include <ATen/ATen.h>
#include <ATen/Dispatch.h>

#include <cmath>

namespace comera {

at::Tensor masked_rank_vector(const at::Tensor& d, double threshold) {
  // Truncation cuts pruned entries out, so usually every entry is kept: then d itself, checked
  // on the CPU without an op (four ATen ops per rank vector per step were a tenth of a
  // batch-1 step).
  if (d.device().is_cpu() && d.is_contiguous() &&
      (d.scalar_type() == at::kFloat || d.scalar_type() == at::kDouble)) {
    bool all_kept = true;
    AT_DISPATCH_FLOATING_TYPES(d.scalar_type(), "comera_masked_rank_vector", [&] {
      const scalar_t* p = d.data_ptr<scalar_t>();
      for (int64_t i = 0; i < d.numel(); ++i) all_kept = all_kept && std::abs(p[i]) >= threshold;
    });
    if (all_kept) return d;
  }
  return d * (d.abs() >= threshold).to(d.scalar_type());
}

TruncationResult truncate_chain(std::vector<at::Tensor>& cores,
                                std::vector<at::Tensor>& rank_vectors, double threshold,
                                bool fold) {
  at::NoGradGuard no_grad;
  TruncationResult result;
  const int64_t K = static_cast<int64_t>(cores.size());
  result.ranks_before.push_back(cores[0].size(0));
  for (const auto& c : cores) result.ranks_before.push_back(c.size(-1));

  // Kept slices per interior bond.
  std::vector<at::Tensor> keep(K + 1);
  bool dead = false;
  for (int64_t k = 1; k < K; ++k) {
    keep[k] = at::nonzero(rank_vectors[k - 1].abs() >= threshold).view({-1});
    dead |= keep[k].numel() == 0;
  }
  if (dead)
    for (int64_t k = 1; k < K; ++k)
      keep[k] = keep[k].numel() ? keep[k].narrow(0, 0, 1) : at::zeros({1}, at::kLong);

  result.ranks_after = result.ranks_before;
  for (int64_t k = 1; k < K; ++k) result.ranks_after[k] = keep[k].numel();
  // Parameters keep their Variable; gradients of the old shape or scale are dropped.
  for (auto& p : cores) p.mutable_grad() = at::Tensor();
  for (auto& p : rank_vectors) p.mutable_grad() = at::Tensor();
  auto cut = [&](at::Tensor& param, const std::vector<std::pair<int64_t, at::Tensor>>& dims) {
    ParamSlice slice{param, {}};
    auto data = param.detach();
    for (const auto& [dim, index] : dims)
      if (index.numel() != data.size(dim)) {
        data = data.index_select(dim, index);
        slice.kept.emplace_back(dim, index);
      }
    if (slice.kept.empty()) return;
    param.set_data(data.contiguous());
    result.slices.push_back(std::move(slice));
  };
  for (int64_t k = 0; k < K; ++k) {
    std::vector<std::pair<int64_t, at::Tensor>> dims;
    if (k > 0) dims.emplace_back(0, keep[k]);
    if (k + 1 < K) dims.emplace_back(cores[k].dim() - 1, keep[k + 1]);
    cut(cores[k], dims);
  }
  for (int64_t k = 1; k < K; ++k) cut(rank_vectors[k - 1], {{0, keep[k]}});

  if (fold && !dead)
    for (int64_t k = 1; k < K; ++k) {
      auto& d = rank_vectors[k - 1];
      auto& core = cores[k - 1];
      std::vector<int64_t> shape(core.dim(), 1);
      shape.back() = -1;
      core.set_data(core.detach() * d.detach().view(shape));
      d.set_data(at::ones_like(d.detach()));
    }
  return result;
}

}  // namespace comera
