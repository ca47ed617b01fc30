#include "core/training/objective.h"

#include "core/layers/size.h"
#include "core/training/param_groups.h"

#include <ATen/ATen.h>
#include <torch/nn/module.h>

namespace comera {

at::Tensor early_objective(const at::Tensor& task, const at::Tensor& size, const at::Tensor& l2,
                           double gamma, double beta) {
  auto total = task;
  if (gamma != 0) total = total + gamma * size;
  if (beta != 0) total = total + beta * l2;
  return total;
}

at::Tensor late_objective(const at::Tensor& task, const at::Tensor& size, double loss_target,
                          double size_target, double omega_loss, double omega_size, double rho) {
  auto gap = at::maximum(omega_loss * (task - loss_target), omega_size * (size - size_target));
  return gap + rho * (task + size);
}

at::Tensor core_l2(const torch::nn::Module& model) {
  at::Tensor total;
  for (const auto& [name, t] : tensorized_layers(model)) {
    (void)name;
    for (const auto& core : t->cores()) {
      auto s = core.pow(2).sum();
      total = total.defined() ? total + s : s;
    }
  }
  return total.defined() ? total : at::zeros({});
}

Objective::Objective(SurrogateKind surrogate, EarlyStageConfig early, LateStageConfig late,
                     double size_scale, double initial_size)
    : surrogate_(surrogate),
      early_(early), late_config_(late), size_scale_(size_scale), initial_size_(initial_size) {}

void Objective::start_late(double early_exact_size) {
  const double target = late_config_.size_target > 0 ? late_config_.size_target
                                                     : late_config_.size_ratio * early_exact_size;
  resume_late(initial_size_ > 0 ? target / initial_size_ : 0);
}

void Objective::resume_late(double size_target_scaled) {
  late_ = true;
  size_target_ = size_target_scaled;
}

ObjectiveValue Objective::operator()(const at::Tensor& task_loss, const torch::nn::Module& model) const {
  ObjectiveValue v;
  v.task = task_loss;
  v.size = size_scale_ > 0 ? surrogate_size(model, surrogate_) / size_scale_
                           : at::zeros({}, task_loss.options());
  if (late_ && late_config_.control == LateControl::Cut) {
    v.total = task_loss;  // size moves by cuts (late_cuts.h)
  } else if (late_) {
    const auto& l = late_config_;
    v.total = late_objective(task_loss, v.size, l.loss_target, size_target_, l.omega_loss,
                             l.omega_size, l.rho);
  } else {
    const auto l2 = early_.beta != 0 ? core_l2(model) : at::Tensor();
    v.total = early_objective(task_loss, v.size, l2, early_.gamma, early_.beta);
  }
  return v;
}

}  // namespace comera
