#include "core/training/sliceable_optimizer.h"

#include "core/util/error.h"

#include <torch/optim/optimizer.h>

namespace comera {

bool can_slice(const torch::optim::Optimizer& optimizer) {
  return dynamic_cast<const SliceableOptimizer*>(&optimizer) != nullptr;
}

void slice_optimizer_state(torch::optim::Optimizer& optimizer, const std::vector<ParamSlice>& slices) {
  if (slices.empty()) return;
  auto* sliceable = dynamic_cast<SliceableOptimizer*>(&optimizer);
  if (!sliceable)
    throw Error("this optimiser cannot slice its state when rank truncation cuts the cores "
                "(set training.truncation.when to \"never\", or use adamw, sgd or adagrad)");
  sliceable->slice_state(slices);
}

at::Tensor sliced(at::Tensor t, const ParamSlice& slice) {
  for (const auto& [dim, index] : slice.kept) t = t.index_select(dim, index.to(t.device()));
  return t.contiguous();
}

StateKey state_key(const at::Tensor& p) {
#if TORCH_VERSION_MAJOR >= 2
  return p.unsafeGetTensorImpl();
#else
  return c10::guts::to_string(p.unsafeGetTensorImpl());
#endif
}

}  // namespace comera
