#include "core/training/training_step.h"

#include "core/distributed/data_parallel.h"
#include "core/layers/lte_linear.h"
#include "core/util/auc.h"
#include "core/util/step_parts.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/record_function.h>
#include <torch/autograd.h>
#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>

#include <algorithm>
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
                         double clip_grad_norm, const Batch& batch, DataParallel* parallel,
                         bool stop_requested, Precision precision) {
  auto& model = task.model();
  // Gradients set to none (not zeroed): backward then stores the first gradient without a fill.
  for (auto& p : model.parameters()) p.mutable_grad().reset();
  // A data-parallel shard may be empty (a last batch shorter than the ranks) or hold no masked
  // token: it then contributes nothing to the loss or the gradients.
  TaskOutput out;
  if (batch.examples() > 0) {
    const ForwardPrecision forward(precision);
    out = task.forward(batch);
    out.loss = float_activation(out.loss);
  }
  StepResult r;
  at::Tensor loss = out.loss;
  double weight = 1;  // this rank's share of the batch's predictions
  if (parallel) {
    const bool has = out.predictions > 0;
    double local[5] = {0, static_cast<double>(out.predictions), 0, 0, stop_requested ? 1.0 : 0.0};
    if (has) {
      const auto host = at::stack({out.loss.detach().to(at::kDouble), out.correct.to(at::kDouble),
                                   out.tokens.to(at::kDouble)}).cpu();
      local[0] = host[0].item<double>() * local[1];
      local[2] = host[1].item<double>();
      local[3] = host[2].item<double>();
    }
    const auto total = parallel->sum({local, local + 5});
    r.predictions = static_cast<int64_t>(total[1]);
    r.correct = static_cast<int64_t>(total[2]);
    r.tokens = static_cast<int64_t>(total[3]);
    r.stop = total[4] > 0;
    const double batch_loss = total[1] > 0 ? total[0] / total[1] : 0;
    weight = local[1] / std::max(1.0, total[1]);
    // The objective sees the whole batch's loss (its late stage is not linear in it); the
    // gradient through it is this rank's, which the weighted sum over ranks turns into the batch's.
    const auto value_of_batch = at::scalar_tensor(batch_loss, at::TensorOptions(at::kDouble));
    loss = has ? out.loss + (value_of_batch.to(out.loss.options()) - out.loss.detach())
               : value_of_batch.to(at::kFloat);
  }
  const auto value = [&] {
    RECORD_USER_SCOPE(step_parts::scope_name(step_parts::kSizeTerms));
    return objective(loss, model);
  }();
  if (parallel) {
    const auto host = at::stack({value.total.detach().to(at::kDouble), loss.detach().to(at::kDouble),
                                 value.size.detach().to(at::kDouble)}).cpu();
    const double* v = host.data_ptr<double>();
    r.objective = v[0];
    r.task_loss = v[1];
    r.size = v[2];
  } else {
    const auto host = at::stack({value.total.detach().to(at::kDouble), out.loss.detach().to(at::kDouble),
                                 value.size.detach().to(at::kDouble), out.correct.to(at::kDouble),
                                 out.tokens.to(at::kDouble)})
                          .cpu();
    const double* v = host.data_ptr<double>();
    r.objective = v[0];
    r.task_loss = v[1];
    r.size = v[2];
    r.correct = static_cast<int64_t>(v[3]);
    r.tokens = static_cast<int64_t>(v[4]);
    r.predictions = out.predictions;
    r.stop = stop_requested;
  }
  // Every rank sees the same objective, so all of them return here or none does.
  if (!std::isfinite(r.objective)) {
    r.finite = false;
    return r;
  }
  if (weight > 0) value.total.backward();
  if (parallel) parallel->reduce_gradients(model.parameters(), weight);
  if (clip_grad_norm > 0) clip_gradients(model.parameters(), clip_grad_norm);
  {
    RECORD_USER_SCOPE(step_parts::scope_name(step_parts::kOptimizer));
    optimizer.step();
  }
  lte_after_step(model);
  return r;
}

EvalResult evaluate(Task& task, const Dataset& data, int64_t batch_size, const c10::Device& device,
                    DataParallel* parallel, Precision precision) {
  auto& model = task.model();
  const bool was_training = model.is_training();
  model.eval();
  at::NoGradGuard no_grad;
  at::Tensor loss_sum, correct;
  std::vector<at::Tensor> scores, targets;
  double predictions = 0;
  const auto stream = data.batches(batch_size);
  Batch batch;
  const int ranks = parallel ? parallel->size() : 1, rank = parallel ? parallel->rank() : 0;
  const auto generator = at::make_generator<at::CPUGeneratorImpl>(kEvalSeed);
  for (int64_t index = 0; stream->next(batch); ++index) {
    // Every rank draws every batch's corruption (cheap, on the host), so each batch is scored
    // on the inputs one process would score, whichever rank scores it.
    auto prepared = task.prepare(std::move(batch), generator);
    if (index % ranks != rank) continue;
    const auto out = [&] {
      const ForwardPrecision forward(precision);
      return task.forward(prepared.to(device));
    }();
    if (out.predictions == 0) continue;
    if (out.scores.defined()) scores.push_back(out.scores), targets.push_back(out.targets);
    const auto loss = out.loss.to(at::kDouble) * static_cast<double>(out.predictions);
    loss_sum = loss_sum.defined() ? loss_sum + loss : loss;
    correct = correct.defined() ? correct + out.correct.to(at::kDouble) : out.correct.to(at::kDouble);
    predictions += static_cast<double>(out.predictions);
  }
  model.train(was_training);
  std::vector<double> sums = {0, 0, predictions};
  if (loss_sum.defined()) {
    const auto host = at::stack({loss_sum, correct}).cpu();
    sums[0] = host[0].item<double>();
    sums[1] = host[1].item<double>();
  }
  if (parallel) sums = parallel->sum(sums);
  EvalResult r;
  r.predictions = static_cast<int64_t>(sums[2]);
  if (r.predictions > 0) {
    r.loss = sums[0] / sums[2];
    r.accuracy = sums[1] / sums[2];
  }
  // Whether the task scores at all is the same on every rank; a rank may have no batch.
  double scored = scores.empty() ? 0 : 1;
  if (parallel) scored = parallel->sum({scored})[0];
  if (scored > 0) {
    auto s = scores.empty() ? at::empty({0}, at::kFloat) : at::cat(scores).to(at::kFloat).cpu();
    auto t = targets.empty() ? at::empty({0}, at::kFloat) : at::cat(targets).to(at::kFloat).cpu();
    if (parallel) s = parallel->gather(s), t = parallel->gather(t);
    r.metrics["auc"] = exact_auc(s, t);
  }
  return r;
}

}  // namespace comera
