#pragma once
// Row lookup from TTM tables (METHOD §5): the contraction kernels behind TTMEmbedding.
// Table s is in lookup layout (V_s, r_{s-1}, E_s, r_s), contiguous, with r_0 = r_last = 1.
// Row n is the product of the slices table_s[idx_s[n]] along the ranks, its embedding
// multi-index row-major over the tables (first slowest): shape (N, prod_s E_s).
#include <ATen/core/Tensor.h>

#include <vector>

namespace comera {

// Gathers each id's slices and multiplies them with batched GEMMs (at::bmm), one table after
// another. Any device and dtype; ordinary autograd (the gathered slices are kept for backward).
at::Tensor chain_rows(const std::vector<at::Tensor>& tables, const std::vector<at::Tensor>& idx);

// Two tables: row n = left[ia[n]] · right[ib[n]]. On CPU (float, double) with the fast kernels
// on, the fused kernel of core/kernels/cpu/pair_rows.h, which makes no gathered copy; otherwise
// chain_rows. Differentiable once in both tables.
at::Tensor pair_rows(const at::Tensor& left, const at::Tensor& right, const at::Tensor& ia,
                     const at::Tensor& ib);

}  // namespace comera
