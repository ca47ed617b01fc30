#include "core/training/training_step.h"

#include "core/layers/lte_linear.h"
#include "core/util/auc.h"
#include "core/util/step_parts.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/record_function.h>
#include <torch/autograd.h>
#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>

#include <cmath>

namespace comera {

namespace {

constexpr uint64_t kEvalSeed = 0x6D61736B;

}  // namespace

void clip_gradients(const std::vector<at::Tensor>& parameters, double max_norm) {
  std::vector<at::Tensor> grads, norms;
  for (const auto& p : parameters)
    if (p.grad().defined()) grads.push_back(p.grad()), norms.push_back(p.grad().norm(2));
  if (grads.empty()) return;
  const auto total = at::stack(norms).norm(2);
  const auto coefficient = (max_norm / (total + 1e-6)).clamp_max(1.0);
  for (auto& g : grads) g.mul_(coefficient);
}

StepResult training_step(Task& task, torch::optim::Optimizer& optimizer, const Objective& objective,
                         double clip_grad_norm, const Batch& batch) {
  auto& model = task.model();
  // Gradients set to none (not zeroed): backward then stores the first gradient without a fill.
  for (auto& p : model.parameters()) p.mutable_grad().reset();
  const auto out = task.forward(batch);
  const auto value = [&] {
    RECORD_USER_SCOPE(step_parts::scope_name(step_parts::kSizeTerms));
    return objective(out.loss, model);
  }();
  const auto host = at::stack({value.total.detach().to(at::kDouble), out.loss.detach().to(at::kDouble),
                               value.size.detach().to(at::kDouble), out.correct.to(at::kDouble),
                               out.tokens.to(at::kDouble)})
                        .cpu();
  const double* v = host.data_ptr<double>();
  StepResult r;
  r.objective = v[0];
  r.task_loss = v[1];
  r.size = v[2];
  r.correct = static_cast<int64_t>(v[3]);
  r.tokens = static_cast<int64_t>(v[4]);
  r.predictions = out.predictions;
  if (!std::isfinite(r.objective)) {
    r.finite = false;
    return r;
  }
  value.total.backward();
  if (clip_grad_norm > 0) clip_gradients(model.parameters(), clip_grad_norm);
  {
    RECORD_USER_SCOPE(step_parts::scope_name(step_parts::kOptimizer));
    optimizer.step();
  }
  lte_after_step(model);
  return r;
}

EvalResult evaluate(Task& task, const Dataset& data, int64_t batch_size, const c10::Device& device) {
  auto& model = task.model();
  const bool was_training = model.is_training();
  model.eval();
  at::NoGradGuard no_grad;
  const auto generator = at::make_generator<at::CPUGeneratorImpl>(kEvalSeed);
  at::Tensor loss_sum, correct;
  std::vector<at::Tensor> scores, targets;
  EvalResult r;
  const auto stream = data.batches(batch_size);
  Batch batch;
  while (stream->next(batch)) {
    const auto out = task.forward(task.prepare(std::move(batch), generator).to(device));
    if (out.scores.defined()) scores.push_back(out.scores), targets.push_back(out.targets);
    const auto loss = out.loss.to(at::kDouble) * static_cast<double>(out.predictions);
    loss_sum = loss_sum.defined() ? loss_sum + loss : loss;
    correct = correct.defined() ? correct + out.correct : out.correct;
    r.predictions += out.predictions;
  }
  model.train(was_training);
  if (r.predictions > 0) {
    const auto host = at::stack({loss_sum, correct.to(at::kDouble)}).cpu();
    r.loss = host[0].item<double>() / static_cast<double>(r.predictions);
    r.accuracy = host[1].item<double>() / static_cast<double>(r.predictions);
  }
  if (!scores.empty()) r.metrics["auc"] = exact_auc(at::cat(scores), at::cat(targets));
  return r;
}

}  // namespace comera
