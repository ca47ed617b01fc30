#pragma once
// Adagrad (as torch::optim::Adagrad) whose squared-gradient sums follow physical rank
// truncation: the other optimiser DLRM users train embedding tables with.
#include "core/training/sliceable_optimizer.h"

#include <torch/optim/adagrad.h>

#include <memory>

namespace comera {

class Adagrad : public torch::optim::Adagrad, public SliceableOptimizer {
 public:
  using torch::optim::Adagrad::Adagrad;
  void slice_state(const std::vector<ParamSlice>& slices) override;
};

class OptimizerKind;

// training.optimizer.kind "adagrad": lr_decay, initial_accumulator, eps (default 1e-10).
std::shared_ptr<const OptimizerKind> adagrad_kind();

}  // namespace comera
