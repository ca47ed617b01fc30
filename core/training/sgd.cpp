#include "core/training/sgd.h"

namespace comera {

void SGD::slice_state(const std::vector<ParamSlice>& slices) {
  for (const auto& slice : slices) {
    auto it = state_.find(state_key(slice.param));
    if (it == state_.end()) continue;  // no momentum yet
    auto& s = static_cast<torch::optim::SGDParamState&>(*it->second);
    if (s.momentum_buffer().defined()) s.momentum_buffer(sliced(s.momentum_buffer(), slice));
  }
}

}  // namespace comera
