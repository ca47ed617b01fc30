#pragma once
// Plain SGD (optionally with momentum, as torch::optim::SGD) whose momentum buffers follow
// physical rank truncation: what DLRM users train embeddings with.
#include "core/training/sliceable_optimizer.h"

#include <torch/optim/sgd.h>

#include <memory>

namespace comera {

class SGD : public torch::optim::SGD, public SliceableOptimizer {
 public:
  using torch::optim::SGD::SGD;
  void slice_state(const std::vector<ParamSlice>& slices) override;
};

class OptimizerKind;

// training.optimizer.kind "sgd": momentum, dampening, nesterov (all off by default).
std::shared_ptr<const OptimizerKind> sgd_kind();

}  // namespace comera
