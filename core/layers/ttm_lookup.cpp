#include "core/layers/ttm_lookup.h"

#include "core/kernels/cpu/pair_rows.h"
#include "core/kernels/fast_kernels.h"

#include <ATen/ATen.h>

namespace comera {

at::Tensor chain_rows(const std::vector<at::Tensor>& tables, const std::vector<at::Tensor>& idx) {
  const int64_t n = idx.at(0).numel();
  int64_t width = tables[0].size(2);
  at::Tensor acc = tables[0].index_select(0, idx[0]).reshape({n, width, tables[0].size(3)});
  for (size_t s = 1; s < tables.size(); ++s) {
    const at::Tensor& t = tables[s];
    const at::Tensor slices = t.index_select(0, idx[s]).reshape({n, t.size(1), t.size(2) * t.size(3)});
    width *= t.size(2);
    acc = at::bmm(acc, slices).reshape({n, width, t.size(3)});
  }
  return acc.reshape({n, width});
}

at::Tensor pair_rows(const at::Tensor& left, const at::Tensor& right, const at::Tensor& ia,
                     const at::Tensor& ib) {
  if (fast_kernels_enabled() && cpu::pair_rows_supported(left, ia, ib))
    return cpu::pair_rows(left, right, ia, ib);
  return chain_rows({left, right}, {ia, ib});
}

}  // namespace comera
