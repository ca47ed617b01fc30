#pragma once
// One optimiser step of the bi-objective trainer: forward, task loss plus size terms, backward,
// gradient clipping, AdamW step. Shared by the trainer and `comera bench step`.
#include "core/data/pair_dataset.h"
#include "core/data/token_masking.h"
#include "core/models/transformer.h"
#include "core/training/objective.h"
#include "core/training/train_config.h"

namespace torch::optim {
class AdamW;
}

namespace comera {

// What a step predicts: the pairs' labels, or the original ids of tokens chosen by `masking`
// (its probability, [MASK] id, vocabulary and special ids).
struct StepTask {
  TaskKind kind = TaskKind::Classification;
  MaskingOptions masking;
};

struct StepResult {
  double objective = 0;  // the stage's objective (what was minimised)
  double task_loss = 0;  // L, mean over the predictions
  double size = 0;       // surrogate in units of its initial value
  int64_t correct = 0;   // argmax hits
  int64_t examples = 0;  // predictions: pairs, or masked tokens
  int64_t tokens = 0;    // non-padding tokens
  bool finite = true;    // false: loss was NaN/inf, nothing was updated
};

// Masked-LM tokens are drawn from the global CPU generator (checkpointed with the run).
StepResult training_step(Transformer& model, torch::optim::AdamW& optimizer,
                         const Objective& objective, double clip_grad_norm, const PairBatch& batch,
                         const StepTask& task = {});

struct EvalResult {
  double loss = 0;  // mean cross-entropy per prediction
  double accuracy = 0;
  int64_t examples = 0;  // predictions: pairs, or masked tokens
};

// The whole set in order, the last batch short (nothing dropped); the model's train/eval mode
// is restored afterwards. Masked-LM tokens come from a fixed seed: every evaluation of a run
// scores the same masked positions.
EvalResult evaluate(Transformer& model, const PairDataset& data, int64_t batch_size,
                    const StepTask& task = {});

}  // namespace comera
