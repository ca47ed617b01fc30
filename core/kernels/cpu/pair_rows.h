#pragma once
// The fused CPU kernel of the TTM lookup's two-table product (ttm_lookup.h: pair_rows): row n =
// left[ia[n]] · right[ib[n]], the slices read in place forward and backward, so no gathered copy
// is made or kept.
#include <ATen/core/Tensor.h>

namespace comera::cpu {

// Whether pair_rows takes these: CPU float or double tables, int64 ids.
bool pair_rows_supported(const at::Tensor& left, const at::Tensor& ia, const at::Tensor& ib);

// left (VL, 1, EL, R), right (VR, R, ER, 1) in lookup layout -> (N, EL·ER). Differentiable once
// in both tables.
at::Tensor pair_rows(const at::Tensor& left, const at::Tensor& right, const at::Tensor& ia,
                     const at::Tensor& ib);

}  // namespace comera::cpu
