#pragma once
// For optimiser kinds (optimizer_kind.h): LibTorch's parameter groups of the three groups, each
// with a copy of the kind's options at the group's learning rate.
#include "core/training/param_groups.h"

#include <torch/optim/optimizer.h>

#include <memory>
#include <vector>

namespace comera {

template <class Options>
std::vector<torch::optim::OptimizerParamGroup> torch_groups(const ParameterGroups& groups,
                                                            const std::vector<double>& rates,
                                                            const Options& options) {
  std::vector<torch::optim::OptimizerParamGroup> out;
  const std::vector<at::Tensor>* lists[] = {&groups.cores, &groups.rank_vectors, &groups.other};
  for (size_t g = 0; g < 3; ++g) {
    auto o = std::make_unique<Options>(options);
    o->lr(rates[g]);
    out.emplace_back(*lists[g], std::move(o));
  }
  return out;
}

}  // namespace comera
