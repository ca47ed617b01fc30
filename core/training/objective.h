#pragma once
// The bi-objective training loss (METHOD §3). Size terms are in units of the initial size:
// the surrogate is divided by its value at initialisation (all d = 1) and the late-stage target
// S0 by the exact tensorized size at initialisation, so gamma, omega and rho mean the same
// whatever the model and the surrogate kind.
#include "core/training/train_config.h"

#include <ATen/core/Tensor.h>

namespace torch::nn {
class Module;
}

namespace comera {

// L + gamma * size + beta * l2.
at::Tensor early_objective(const at::Tensor& task, const at::Tensor& size, const at::Tensor& l2,
                           double gamma, double beta);
// max{omega_loss (L - L0), omega_size (size - S0)} + rho (L + size).
at::Tensor late_objective(const at::Tensor& task, const at::Tensor& size, double loss_target,
                          double size_target, double omega_loss, double omega_size, double rho);

// Sum of squares of every core of every tensorized layer.
at::Tensor core_l2(const torch::nn::Module& model);

struct ObjectiveValue {
  at::Tensor total;  // differentiable
  at::Tensor task;   // L
  at::Tensor size;   // surrogate in units of its initial value
};

class Objective {
 public:
  // size_scale: the surrogate at initialisation; initial_size: exact core entries then. A model
  // without tensorized layers (both 0) has no size terms.
  Objective(SurrogateKind surrogate, EarlyStageConfig early, LateStageConfig late, double size_scale,
            double initial_size);

  bool late() const { return late_; }
  // Enters the late stage; early_exact_size: exact core entries at the end of the early stage
  // (S0 = size_ratio times it, unless an absolute size_target is configured).
  void start_late(double early_exact_size);
  // Restores a late stage with its target (from a checkpoint).
  void resume_late(double size_target_scaled);
  double size_target() const { return size_target_; }  // S0 in units of the initial size
  double size_scale() const { return size_scale_; }
  double initial_size() const { return initial_size_; }

  ObjectiveValue operator()(const at::Tensor& task_loss, const torch::nn::Module& model) const;

 private:
  SurrogateKind surrogate_;
  EarlyStageConfig early_;
  LateStageConfig late_config_;
  double size_scale_, initial_size_;
  bool late_ = false;
  double size_target_ = 0;
};

}  // namespace comera
