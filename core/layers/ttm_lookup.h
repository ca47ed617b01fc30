#pragma once
// Row lookup from TTM tables (METHOD §5): the one lookup core behind TTMEmbedding and
// TTMEmbeddingBag. Cores are (r_{k-1}, v_k, e_k, r_k) with r_0 = r_d = 1; row n of the table is
// the product of the slices core_k[:, idx_k(n), :, :] along the ranks, its vocabulary
// multi-index row-major over the cores (first slowest), its embedding multi-index likewise.
#include "core/formats/ttm_shape.h"

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

namespace torch::nn {
class Module;
}

namespace comera {

// A TTM chain's parameters registered on `module` (TTMEmbedding, TTMLinear): "core0".. of shape
// (r_{k-1}, v_k, e_k, r_k), uninitialised, and the rank vectors "rank1".. at 1.
void register_ttm_chain(torch::nn::Module& module, const TTMShape& shape, std::vector<at::Tensor>& cores,
                        std::vector<at::Tensor>& rank_vectors);

// Table s is in lookup layout (V_s, r_{s-1}, E_s, r_s), contiguous. Gathers each id's slices
// and multiplies them with batched GEMMs (at::bmm), one table after another: (N, prod_s E_s).
// Any device and dtype; ordinary autograd (the gathered slices are kept for backward).
at::Tensor chain_rows(const std::vector<at::Tensor>& tables, const std::vector<at::Tensor>& idx);

// Two tables: row n = left[ia[n]] · right[ib[n]]. On CPU (float, double) with the fast kernels
// on, the fused kernel of core/kernels/cpu/pair_rows.h, which makes no gathered copy; otherwise
// chain_rows. Differentiable once in both tables.
at::Tensor pair_rows(const at::Tensor& left, const at::Tensor& right, const at::Tensor& ia,
                     const at::Tensor& ib);

// ids of any integer dtype, flattened to int64 and checked against the `vocab` rows in use; a
// bad id is an error naming `layer` (one host read per lookup, also on a device).
at::Tensor checked_flat_ids(const at::Tensor& ids, int64_t vocab, const std::string& layer);

// Cores with each rank vector, masked at `threshold`, folded into the core on its left; in the
// forward's compute dtype (core/util/precision.h).
std::vector<at::Tensor> scaled_cores(const std::vector<at::Tensor>& cores,
                                     const std::vector<at::Tensor>& rank_vectors, double threshold);

// The distinct ids of a flat id list and where each id's row lies among them, when at least a
// quarter of the ids are repeats (otherwise `unique` is `ids` and `inverse` undefined): scattering
// rows back costs about a quarter of computing them (CPU, the paper's shape). Its size is
// data-dependent: a host read on a device (graph capture needs dedup off).
struct DistinctIds {
  at::Tensor unique, inverse;
};
DistinctIds distinct_ids(const at::Tensor& ids);
// The same, always: the sorted distinct ids and each id's position among them.
DistinctIds sorted_distinct(const at::Tensor& ids);

// Tables in lookup layout chained as chain_rows does, keeping the first table's left rank and
// the last one's right rank: (N, r_first, prod E_s, r_last); one pair_rows per step, so the
// fused kernel runs where it can (at::bmm over many tiny matrices costs more than their work).
at::Tensor chain_slices(const std::vector<at::Tensor>& tables, const std::vector<at::Tensor>& idx);

// How merged_rows makes each half's table: by its cost (Auto), all rows of the merged half
// (Full), or only the rows the ids use (Used). Tests force each; the layers use Auto.
enum class MergeChoice { Auto, Full, Used };

// Optimised path (METHOD §5): the chain merged into two tables at its cheapest bond, one small
// GEMM per row. A half whose merged table has more rows than the ids use (the big tables of a
// DLRM: 46,872 rows against a few thousand ids a batch) makes only the rows used. `ids` flat
// int64 in range -> (N, prod e_k). No dedup (callers use distinct_ids).
at::Tensor merged_rows(const std::vector<at::Tensor>& cores, const at::Tensor& ids,
                       MergeChoice choice = MergeChoice::Auto);

// Reference path: per id, its d core slices contracted one after another.
at::Tensor naive_rows(const std::vector<at::Tensor>& cores, const at::Tensor& ids);

}  // namespace comera
