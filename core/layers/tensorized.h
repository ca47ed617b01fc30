#pragma once
// The interface every tensor-train layer (TTLinear, TTMEmbedding) offers to size accounting,
// the trainer and the tuner.
#include "core/formats/core_chain.h"

#include <ATen/core/Tensor.h>

#include <string>
#include <utility>
#include <vector>

namespace comera {

// One parameter sliced in place by truncate(): the Variable is the same object (optimisers
// keep their references), its data now holds only the kept entries. An optimiser slices its
// per-parameter state the same way: state = state.index_select(dim, index) for each entry.
struct ParamSlice {
  at::Tensor param;
  std::vector<std::pair<int64_t, at::Tensor>> kept;  // (dim, int64 indices kept), in order
};

struct TruncationResult {
  std::vector<int64_t> ranks_before, ranks_after;  // full rank lists, boundary 1s included
  std::vector<ParamSlice> slices;
  bool changed() const { return ranks_before != ranks_after; }
};

class Tensorized {
 public:
  virtual ~Tensorized() = default;
  // "tt_linear" or "ttm_embedding".
  virtual std::string layer_kind() const = 0;
  // Current chain (ranks as allocated; shrinks after truncate()).
  virtual const CoreChain& chain() const = 0;
  // The rank-control parameters d_1..d_{K-1}, one per interior bond, unmasked.
  virtual std::vector<at::Tensor> rank_vectors() const = 0;
  // The core parameters, in chain order.
  virtual std::vector<at::Tensor> cores() const = 0;
  // |d| below this prunes the entry (METHOD §1).
  virtual double threshold() const = 0;
  // Parameters of the same layer built dense (in*out, or vocab*D); bias not included.
  virtual int64_t dense_equivalent() const = 0;
  // Cuts pruned slices out of cores and rank vectors; with `fold`, multiplies each surviving
  // d into the core on its left and resets d to 1. The layer's output is unchanged.
  virtual TruncationResult truncate(bool fold = false) = 0;
  // Fresh values at the current ranks, as the layer is initialised (d = 1).
  virtual void reset_parameters() = 0;
  // The standard deviation each core was drawn with at the last reset_parameters(): the scale
  // its entries live at, which shrinks as its ranks grow (optimizer.core_rates "relative").
  virtual std::vector<double> core_init_scales() const = 0;
};

// d with pruned entries zeroed (differentiable in the surviving entries); d itself when none is
// pruned.
at::Tensor masked_rank_vector(const at::Tensor& d, double threshold);

// Tensorized::truncate for any chain whose core k has its left bond on dim 0 and its right bond
// on its last dim (rank vector d_k between cores k-1 and k, 0-based). Slices in place with
// set_data and drops every gradient. A bond with no survivors zeroes the whole layer: every bond
// then keeps one slice, the dead one its pruned entry (nothing is folded). The caller updates
// its shape to ranks_after.
TruncationResult truncate_chain(std::vector<at::Tensor>& cores,
                                std::vector<at::Tensor>& rank_vectors, double threshold, bool fold);

}  // namespace comera
