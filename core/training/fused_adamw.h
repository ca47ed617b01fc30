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
#include <unordered_map>
#include <vector>

namespace comera {

class FusedAdamW : public torch::optim::AdamW, public SliceableOptimizer {
 public:
  using torch::optim::AdamW::AdamW;
  torch::Tensor step(LossClosure closure = nullptr) override;
  // Each listed parameter steps at its group's rate times its factor (a core's initial standard
  // deviation under optimizer.core_rates "relative", times lr_embedding_cores / lr_cores for a
  // TTM table's cores); the others at the group's rate.
  void set_rate_factors(const std::vector<at::Tensor>& params, const std::vector<double>& factors);
  // exp_avg, exp_avg_sq (and max_exp_avg_sq) cut like their parameters.
  void slice_state(const std::vector<ParamSlice>& slices) override;

 private:
  // By TensorImpl: truncation slices a parameter in place, so its identity holds.
  std::unordered_map<const void*, double> rate_factors_;
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
