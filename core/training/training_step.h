#pragma once
// One optimiser step of the bi-objective trainer: forward, task loss plus size terms, backward,
// gradient clipping, AdamW step. Shared by the trainer and `comera bench step`.
#include "core/data/pair_dataset.h"
#include "core/models/transformer.h"
#include "core/training/objective.h"

namespace torch::optim {
class AdamW;
}

namespace comera {

struct StepResult {
  double objective = 0;  // the stage's objective (what was minimised)
  double task_loss = 0;  // L, mean over the batch
  double size = 0;       // surrogate in units of its initial value
  int64_t correct = 0;   // argmax hits in the batch
  int64_t examples = 0;
  int64_t tokens = 0;    // non-padding tokens
  bool finite = true;    // false: loss was NaN/inf, nothing was updated
};

StepResult training_step(Transformer& model, torch::optim::AdamW& optimizer,
                         const Objective& objective, double clip_grad_norm, const PairBatch& batch);

struct EvalResult {
  double loss = 0;  // mean cross-entropy per example
  double accuracy = 0;
  int64_t examples = 0;
};

// The whole set in order, the last batch short (nothing dropped); the model's train/eval mode
// is restored afterwards.
EvalResult evaluate(Transformer& model, const PairDataset& data, int64_t batch_size);

}  // namespace comera
