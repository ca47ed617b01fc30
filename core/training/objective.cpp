#include "core/training/objective.h"

#include "core/layers/size.h"
#include "core/training/param_groups.h"

#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <algorithm>

namespace comera {

at::Tensor early_objective(const at::Tensor& task, const at::Tensor& size, const at::Tensor& l2,
                           double gamma, double beta) {
  auto total = task;
  if (gamma != 0) total = total + gamma * size;
  if (beta != 0) total = total + beta * l2;
  return total;
}

at::Tensor late_objective(const at::Tensor& task, const at::Tensor& size, double loss_target,
                          double size_target, double omega_loss, double omega_size, double rho,
                          double smoothing) {
  const auto loss_gap = omega_loss * (task - loss_target) / loss_target;
  const auto size_gap = omega_size * (size - size_target) / size_target;
  const auto gap = smoothing > 0
                       ? smoothing * at::logsumexp(at::stack({loss_gap, size_gap}) / smoothing, 0)
                       : at::maximum(loss_gap, size_gap);
  return gap + rho * (task / loss_target + size / size_target);
}

at::Tensor exact_size_tensor(const torch::nn::Module& model) {
  at::Tensor total;
  for (const auto& [name, layer] : tensorized_layers(model)) {
    (void)name;
    const auto& chain = layer->chain();
    const auto options = layer->cores().front().options();
    // Surviving entries per bond, the boundary 1s included.
    std::vector<at::Tensor> counts = {at::ones({}, options)};
    for (const auto& d : layer->rank_vectors())
      counts.push_back(d.detach().abs().ge(layer->threshold()).sum().to(options.dtype()));
    counts.push_back(at::ones({}, options));
    const auto r = at::stack(counts);
    std::vector<double> core_sizes;
    for (int64_t k = 0; k < chain.cores(); ++k) core_sizes.push_back(static_cast<double>(chain.core_size(k)));
    const auto sizes = at::tensor(core_sizes, options.dtype(at::kDouble)).to(options.dtype());
    const auto bonds = r.numel() - 1;
    // An empty bond zeroes the whole layer, not only the two cores beside it.
    const auto s = (sizes * r.narrow(0, 0, bonds) * r.narrow(0, 1, bonds)).sum() * r.gt(0).all();
    total = total.defined() ? total + s : s;
  }
  return total.defined() ? total : at::zeros({});
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

void Objective::start_late(double early_exact_size, const torch::nn::Module& model) {
  const double target = late_config_.size_target > 0 ? late_config_.size_target
                                                     : late_config_.size_ratio * early_exact_size;
  resume_late(initial_size_ > 0 ? target / initial_size_ : 0, -1, measure_gauge(model));
}

void Objective::resume_late(double size_target_scaled, double loss_average, GaugeNorms gauge) {
  late_ = true;
  size_target_ = size_target_scaled;
  loss_average_ = loss_average >= 0 ? at::scalar_tensor(loss_average, at::kDouble) : at::Tensor();
  gauge_ = std::move(gauge);
}

double Objective::loss_average() const {
  return loss_average_.defined() ? loss_average_.item<double>() : -1;
}

void Objective::after_step(const torch::nn::Module& model) const {
  if (late_) hold_gauge(model, gauge_);
}

ObjectiveValue Objective::operator()(const at::Tensor& task_loss, const torch::nn::Module& model) {
  ObjectiveValue v;
  v.task = task_loss;
  v.size = size_scale_ > 0 ? surrogate_size(model, surrogate_) / size_scale_
                           : at::zeros({}, task_loss.options());
  if (late_) {
    const auto& l = late_config_;
    // The gaps' values come from a moving average of the loss (one batch's loss would flip
    // which gap is larger from step to step) and from the exact size (the surrogate also falls
    // when cores grow and d shrinks, which cuts nothing); their gradients are the batch loss's
    // and the surrogate's.
    const auto batch = task_loss.detach().to(at::kDouble);
    loss_average_ = loss_average_.defined()
                        ? loss_average_.to(batch.device()) * l.loss_average + batch * (1 - l.loss_average)
                        : batch;
    const auto loss = loss_average_.to(task_loss.dtype()) + (task_loss - task_loss.detach());
    const auto exact = initial_size_ > 0 ? exact_size_tensor(model) / initial_size_ : at::zeros_like(v.size);
    const auto size = exact.to(v.size.dtype()) + (v.size - v.size.detach());
    // A target of no size (the early stage cut everything) is measured against one core entry.
    const double target = initial_size_ > 0 ? std::max(size_target_, 1 / initial_size_) : 1;
    v.total = late_objective(loss, size, l.loss_target, target, l.omega_loss, l.omega_size, l.rho,
                             l.smoothing);
  } else {
    const auto l2 = early_.beta != 0 ? core_l2(model) : at::Tensor();
    v.total = early_objective(task_loss, v.size, l2, early_.gamma, early_.beta);
  }
  return v;
}

}  // namespace comera
