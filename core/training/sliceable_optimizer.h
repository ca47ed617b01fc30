#pragma once
// Physical rank truncation cuts slices out of cores and rank vectors (tensorized.h); an
// optimiser with per-parameter state must cut that state the same way or refuse. Each of the
// project's optimisers owns how its state is sliced.
#include "core/layers/tensorized.h"

#include <torch/version.h>

#include <string>
#include <vector>

namespace torch::optim {
class Optimizer;
}

namespace comera {

class SliceableOptimizer {
 public:
  virtual ~SliceableOptimizer() = default;
  // For each sliced parameter, every state tensor of its shape <- index_select along the same
  // dims, so the kept entries keep their state.
  virtual void slice_state(const std::vector<ParamSlice>& slices) = 0;
};

// Whether `optimizer` can follow truncation.
bool can_slice(const torch::optim::Optimizer& optimizer);
// Slices its state; an optimiser that cannot is an error naming the fix.
void slice_optimizer_state(torch::optim::Optimizer& optimizer, const std::vector<ParamSlice>& slices);

// The key torch::optim keeps a parameter's state under: its TensorImpl's address, printed as a
// string up to LibTorch 1.13 and the address itself from 2.0 on.
#if TORCH_VERSION_MAJOR >= 2
using StateKey = void*;
#else
using StateKey = std::string;
#endif
StateKey state_key(const at::Tensor& p);

// `t` cut like the parameter of `slice`.
at::Tensor sliced(at::Tensor t, const ParamSlice& slice);

}  // namespace comera
