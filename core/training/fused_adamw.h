#pragma once
// AdamW with the same state, options, serialisation and update rule as torch::optim::AdamW,
// but one fused pass over all parameters' raw float/double memory instead of ~10 tensor ops each:
// a tensorized model has hundreds of small parameters, where the per-op overhead of the
// stock step dominated its cost. Other dtypes and devices, or the fast kernels switched off
// (fast_kernels.h), take the stock step's ATen ops parameter by parameter.
#include "core/training/sliceable_optimizer.h"

#include <torch/optim/adamw.h>

namespace comera {

class FusedAdamW : public torch::optim::AdamW, public SliceableOptimizer {
 public:
  using torch::optim::AdamW::AdamW;
  torch::Tensor step(LossClosure closure = nullptr) override;
  // exp_avg, exp_avg_sq (and max_exp_avg_sq) cut like their parameters.
  void slice_state(const std::vector<ParamSlice>& slices) override;
};

}  // namespace comera
