#pragma once
// AdamW with the same state, options, serialisation and update rule as torch::optim::AdamW,
// but one fused pass over all parameters' raw float/double memory instead of ~10 tensor ops each:
// a tensorized model has hundreds of small parameters, where the per-op overhead of the
// stock step dominated its cost. Other dtypes and devices, or the fast kernels switched off
// (fast_kernels.h), take the stock step's ATen ops parameter by parameter.
#include "core/training/sliceable_optimizer.h"

#include <nlohmann/json.hpp>
#include <torch/optim/adamw.h>

#include <memory>

namespace comera {

class FusedAdamW : public torch::optim::AdamW, public SliceableOptimizer {
 public:
  using torch::optim::AdamW::AdamW;
  torch::Tensor step(LossClosure closure = nullptr) override;
  // exp_avg, exp_avg_sq (and max_exp_avg_sq) cut like their parameters.
  void slice_state(const std::vector<ParamSlice>& slices) override;
};

class ConfigReader;
class OptimizerKind;

// The moment settings AdamW and GaLore share: betas and eps (defaults [0.9, 0.999] and 1e-8).
nlohmann::json read_adam_moments(const ConfigReader& optimizer);
// AdamW's options of complete settings (betas, eps, amsgrad when present) at learning rate lr.
torch::optim::AdamWOptions adam_options(const nlohmann::json& settings, double lr, double weight_decay);

// training.optimizer.kind "adamw": FusedAdamW.
std::shared_ptr<const OptimizerKind> adamw_kind();

}  // namespace comera
