#include "core/training/training_step.h"

#include <ATen/ATen.h>
#include <torch/autograd.h>
#include <torch/nn/utils/clip_grad.h>
#include <torch/optim/adamw.h>

#include <cmath>

namespace comera {

StepResult training_step(Transformer& model, torch::optim::AdamW& optimizer,
                         const Objective& objective, double clip_grad_norm, const PairBatch& batch) {
  StepResult r;
  // Gradients set to none (not zeroed): backward then stores the first gradient without a fill.
  for (auto& p : model->parameters()) p.mutable_grad().reset();
  const auto logits = model->classify(batch.input_ids, batch.segment_ids, batch.attention_mask);
  const auto task = at::cross_entropy_loss(logits, batch.labels);
  const auto value = objective(task, *model);
  r.objective = value.total.item<double>();
  r.task_loss = task.item<double>();
  r.size = value.size.item<double>();
  r.examples = batch.labels.size(0);
  r.tokens = batch.attention_mask.sum().item<int64_t>();
  r.correct = (logits.argmax(-1) == batch.labels).sum().item<int64_t>();
  if (!std::isfinite(r.objective)) {
    r.finite = false;
    return r;
  }
  value.total.backward();
  if (clip_grad_norm > 0) torch::nn::utils::clip_grad_norm_(model->parameters(), clip_grad_norm);
  optimizer.step();
  return r;
}

EvalResult evaluate(Transformer& model, const PairDataset& data, int64_t batch_size) {
  const bool was_training = model->is_training();
  model->eval();
  at::NoGradGuard no_grad;
  double loss_sum = 0;
  int64_t correct = 0;
  for (const auto& indices : data.epoch(batch_size)) {
    const auto batch = data.batch(indices);
    const auto logits = model->classify(batch.input_ids, batch.segment_ids, batch.attention_mask);
    loss_sum += at::cross_entropy_loss(logits, batch.labels, {}, at::Reduction::Sum).item<double>();
    correct += (logits.argmax(-1) == batch.labels).sum().item<int64_t>();
  }
  model->train(was_training);
  EvalResult r;
  r.examples = data.size();
  if (r.examples > 0) {
    r.loss = loss_sum / static_cast<double>(r.examples);
    r.accuracy = static_cast<double>(correct) / static_cast<double>(r.examples);
  }
  return r;
}

}  // namespace comera
