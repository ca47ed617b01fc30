#include "core/layers/ttm_lookup.h"

#include "core/kernels/cpu/pair_rows.h"
#include "core/kernels/fast_kernels.h"
#include "core/layers/tensorized.h"
#include "core/util/error.h"
#include "core/util/precision.h"

#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <limits>

namespace comera {

namespace {

// Product of dimension `dim` over cores [begin, end).
int64_t mode_product(const std::vector<at::Tensor>& cores, int64_t dim, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t k = begin; k < end; ++k) p *= cores[k].size(dim);
  return p;
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

// Index into the table covering the vocabulary modes of cores [begin, end).
at::Tensor table_index(const at::Tensor& flat, const std::vector<at::Tensor>& cores, size_t begin,
                       size_t end) {
  return flat.div(mode_product(cores, 1, end, cores.size()), "trunc")
      .remainder(mode_product(cores, 1, begin, end));
}

}  // namespace

at::Tensor chain_slices(const std::vector<at::Tensor>& tables, const std::vector<at::Tensor>& idx) {
  const int64_t n = idx.at(0).numel(), r0 = tables[0].size(1);
  if (tables.size() == 1) return tables[0].index_select(0, idx[0]);
  // Each step is a two-table product (the fused kernel where it runs): the slices so far,
  // (r0·width) x r, times the next table's, r x (e·r_next).
  at::Tensor left = tables[0].reshape({tables[0].size(0), 1, r0 * tables[0].size(2), tables[0].size(3)});
  at::Tensor at_row = idx[0];
  int64_t width = tables[0].size(2);
  for (size_t s = 1; s < tables.size(); ++s) {
    const at::Tensor& t = tables[s];
    const auto right = t.reshape({t.size(0), t.size(1), t.size(2) * t.size(3), 1});
    width *= t.size(2);
    left = pair_rows(left, right, at_row, idx[s]).view({n, 1, r0 * width, t.size(3)});
    if (s == 1) at_row = at::arange(n, idx[0].options());
  }
  return left.view({n, r0, width, tables.back().size(3)});
}

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

at::Tensor checked_flat_ids(const at::Tensor& ids, int64_t vocab, const std::string& layer) {
  if (!ids.defined()) throw Error(layer + ": the ids tensor is undefined");
  if (!at::isIntegralType(ids.scalar_type(), /*includeBool=*/false))
    throw Error(layer + ": ids must be an integer tensor (int64), got " +
                c10::toString(ids.scalar_type()) + "; convert them with .to(torch::kLong)");
  at::Tensor flat = ids.reshape({-1}).to(at::kLong);
  if (flat.numel() == 0) return flat;
  const auto minmax = at::aminmax(flat);
  const int64_t lo = std::get<0>(minmax).item<int64_t>(), hi = std::get<1>(minmax).item<int64_t>();
  if (lo < 0 || hi >= vocab)
    throw Error(layer + ": id " + std::to_string(lo < 0 ? lo : hi) +
                " is out of range for a vocabulary of " + std::to_string(vocab) +
                " (valid ids are 0.." + std::to_string(vocab - 1) +
                "); check the tokenizer's vocabulary or the data's table size against the layer's");
  return flat;
}

void register_ttm_chain(torch::nn::Module& module, const TTMShape& shape, std::vector<at::Tensor>& cores,
                        std::vector<at::Tensor>& rank_vectors) {
  cores.clear();
  rank_vectors.clear();
  const auto& r = shape.ranks();
  for (int64_t k = 0; k < shape.d(); ++k)
    cores.push_back(module.register_parameter(
        "core" + std::to_string(k), at::empty({r[k], shape.vocab_modes()[k], shape.emb_modes()[k], r[k + 1]})));
  for (int64_t k = 1; k < shape.d(); ++k)
    rank_vectors.push_back(module.register_parameter("rank" + std::to_string(k), at::ones({r[k]})));
}

std::vector<at::Tensor> scaled_cores(const std::vector<at::Tensor>& cores,
                                     const std::vector<at::Tensor>& rank_vectors, double threshold) {
  std::vector<at::Tensor> out = cores;
  for (size_t k = 0; k < rank_vectors.size(); ++k)
    out[k] = cores[k] * masked_rank_vector(rank_vectors[k], threshold).view({1, 1, 1, -1});
  // In a bf16 forward the lookups run on bf16 tables (the composite paths: bmm in bf16).
  for (auto& c : out) c = compute_cast(c);
  return out;
}

DistinctIds sorted_distinct(const at::Tensor& ids) {
  // By sorting: on the CPU about twice as fast as at::_unique2's hash set at the lookup's sizes
  // (1.0 against 2.3 ms for 15,000 ids).
  const auto sorted = at::sort(ids);
  const auto u = at::unique_consecutive(std::get<0>(sorted), /*return_inverse=*/true);
  return {std::get<0>(u), at::empty_like(ids).scatter_(0, std::get<1>(sorted), std::get<1>(u))};
}

DistinctIds distinct_ids(const at::Tensor& ids) {
  if (ids.numel() <= 1) return {ids, {}};
  auto u = sorted_distinct(ids);
  if (u.unique.numel() * 4 > ids.numel() * 3) return {ids, {}};
  return u;
}

namespace {

// The chain of cores [begin, end) as one lookup table for the ids' sub-indices there: the
// whole merged table, or (when the ids use few of its rows) only the rows they use.
struct HalfTable {
  at::Tensor table;  // (rows, r_begin, E, r_end)
  at::Tensor index;  // each id's row in it
};

HalfTable half_table(const std::vector<at::Tensor>& cores, size_t begin, size_t end, const at::Tensor& ids,
                     MergeChoice choice) {
  const at::Tensor sub = table_index(ids, cores, begin, end);
  if (end - begin == 1) return {lookup_layout(cores[begin]), sub};
  if (choice == MergeChoice::Full) return {lookup_layout(merged_core(cores, begin, end)), sub};
  // Only the rows used, unless every row is: measured on the Kaggle tables at 40,000 examples,
  // making the 16,084 rows used of 16,899 took 8-12 ms forward and backward where merging the
  // whole half took 20-28 ms (its permuted copies and their gradients cost more than the rows).
  const auto u = sorted_distinct(sub);
  const at::Tensor& used = u.unique;
  if (choice == MergeChoice::Auto && used.numel() == mode_product(cores, 1, begin, end))
    return {lookup_layout(merged_core(cores, begin, end)), sub};
  std::vector<at::Tensor> tables, idx;
  for (size_t k = begin; k < end; ++k) {
    tables.push_back(lookup_layout(cores[k]));
    idx.push_back(used.div(mode_product(cores, 1, k + 1, end), "trunc").remainder(cores[k].size(1)));
  }
  return {chain_slices(tables, idx), u.inverse};
}

}  // namespace

at::Tensor merged_rows(const std::vector<at::Tensor>& cores, const at::Tensor& ids, MergeChoice choice) {
  const size_t d = cores.size();
  if (d == 1) return chain_rows({lookup_layout(cores[0])}, {ids});
  // Split the chain where the work is least: each half's table (at most as many rows as ids),
  // then one (E_left x r) · (r x E_right) product per id.
  const int64_t n = ids.numel();
  size_t split = 1;
  int64_t best = std::numeric_limits<int64_t>::max();
  for (size_t h = 1; h < d; ++h) {
    const int64_t e_left = mode_product(cores, 2, 0, h), e_right = mode_product(cores, 2, h, d);
    const int64_t left = std::min(n, mode_product(cores, 1, 0, h)) * e_left;
    const int64_t right = std::min(n, mode_product(cores, 1, h, d)) * e_right;
    const int64_t work = cores[h].size(0) * (left + right + n * e_left * e_right);
    if (work < best) best = work, split = h;
  }
  const auto left = half_table(cores, 0, split, ids, choice), right = half_table(cores, split, d, ids, choice);
  return pair_rows(left.table, right.table, left.index, right.index);
}

at::Tensor naive_rows(const std::vector<at::Tensor>& cores, const at::Tensor& ids) {
  std::vector<at::Tensor> tables, idx;
  for (size_t k = 0; k < cores.size(); ++k) {
    tables.push_back(lookup_layout(cores[k]));
    idx.push_back(table_index(ids, cores, k, k + 1));
  }
  return chain_rows(tables, idx);
}

}  // namespace comera
