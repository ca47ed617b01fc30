#include "core/training/training_step.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/autograd.h>
#include <torch/nn/utils/clip_grad.h>
#include <torch/optim/adamw.h>

#include <cmath>

namespace comera {

namespace {

constexpr uint64_t kEvalMaskSeed = 0x6D61736B;

struct Predictions {
  at::Tensor logits, targets;
};

Predictions predict(Transformer& model, const PairBatch& batch, const StepTask& task,
                    const at::Generator& generator) {
  if (task.kind == TaskKind::Classification)
    return {model->classify(batch.input_ids, batch.segment_ids, batch.attention_mask), batch.labels};
  const auto m = mask_tokens(batch.input_ids, batch.attention_mask, task.masking, generator);
  return {model->masked_lm(m.input_ids, batch.segment_ids, batch.attention_mask, m.positions),
          m.targets};
}

}  // namespace

StepResult training_step(Transformer& model, torch::optim::AdamW& optimizer,
                         const Objective& objective, double clip_grad_norm, const PairBatch& batch,
                         const StepTask& task) {
  StepResult r;
  // Gradients set to none (not zeroed): backward then stores the first gradient without a fill.
  for (auto& p : model->parameters()) p.mutable_grad().reset();
  const auto out = predict(model, batch, task, at::detail::getDefaultCPUGenerator());
  const auto loss = at::cross_entropy_loss(out.logits, out.targets);
  const auto value = objective(loss, *model);
  r.objective = value.total.item<double>();
  r.task_loss = loss.item<double>();
  r.size = value.size.item<double>();
  r.examples = out.targets.size(0);
  r.tokens = batch.attention_mask.sum().item<int64_t>();
  r.correct = (out.logits.argmax(-1) == out.targets).sum().item<int64_t>();
  if (!std::isfinite(r.objective)) {
    r.finite = false;
    return r;
  }
  value.total.backward();
  if (clip_grad_norm > 0) torch::nn::utils::clip_grad_norm_(model->parameters(), clip_grad_norm);
  optimizer.step();
  return r;
}

EvalResult evaluate(Transformer& model, const PairDataset& data, int64_t batch_size,
                    const StepTask& task) {
  const bool was_training = model->is_training();
  model->eval();
  at::NoGradGuard no_grad;
  const auto generator = at::make_generator<at::CPUGeneratorImpl>(kEvalMaskSeed);
  double loss_sum = 0;
  int64_t correct = 0;
  EvalResult r;
  for (const auto& indices : data.epoch(batch_size)) {
    const auto out = predict(model, data.batch(indices), task, generator);
    loss_sum += at::cross_entropy_loss(out.logits, out.targets, {}, at::Reduction::Sum).item<double>();
    correct += (out.logits.argmax(-1) == out.targets).sum().item<int64_t>();
    r.examples += out.targets.size(0);
  }
  model->train(was_training);
  if (r.examples > 0) {
    r.loss = loss_sum / static_cast<double>(r.examples);
    r.accuracy = static_cast<double>(correct) / static_cast<double>(r.examples);
  }
  return r;
}

}  // namespace comera
