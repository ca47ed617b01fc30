#include "core/training/adagrad.h"

namespace comera {

void Adagrad::slice_state(const std::vector<ParamSlice>& slices) {
  for (const auto& slice : slices) {
    auto it = state_.find(state_key(slice.param));
    if (it == state_.end()) continue;
    auto& s = static_cast<torch::optim::AdagradParamState&>(*it->second);
    s.sum(sliced(s.sum(), slice));
  }
}

}  // namespace comera
