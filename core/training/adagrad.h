#pragma once
// Adagrad (as torch::optim::Adagrad) whose squared-gradient sums follow physical rank
// truncation: the other optimiser DLRM users train embedding tables with.
#include "core/training/sliceable_optimizer.h"

#include <torch/optim/adagrad.h>

namespace comera {

class Adagrad : public torch::optim::Adagrad, public SliceableOptimizer {
 public:
  using torch::optim::Adagrad::Adagrad;
  void slice_state(const std::vector<ParamSlice>& slices) override;
};

}  // namespace comera
