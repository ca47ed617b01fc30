#pragma once
// The table of a TTMEmbedding reconstructed densely, independently of the layer's lookups.
#include "core/layers/ttm_embedding.h"

#include <ATen/ATen.h>

namespace comera::testing {

// The table E (prod v, prod e) straight from METHOD §1: d_k masked by hand, cores contracted
// one after another over all rows at once.
inline at::Tensor dense_table(const TTMEmbeddingImpl& layer) {
  const auto cores = layer.cores();
  const auto ds = layer.rank_vectors();
  at::Tensor t = cores[0].squeeze(0);  // (v, e, r)
  for (size_t k = 1; k < cores.size(); ++k) {
    const at::Tensor& d = ds[k - 1];
    t = t * (d * (d.abs() >= layer.threshold()).to(d.scalar_type()));
    const at::Tensor& c = cores[k];  // (r, w, f, s)
    t = at::einsum("ver,rwfs->vwefs", {t, c})
            .reshape({t.size(0) * c.size(1), t.size(1) * c.size(2), c.size(3)});
  }
  return t.squeeze(-1);
}

}  // namespace comera::testing
