#pragma once
// One optimiser step of the bi-objective trainer: forward, task loss plus size terms, backward,
// gradient clipping, optimiser step, LTE merges when due (lte_linear.h); and evaluation over a dataset. Any model kind and task
// (task.h), any optimiser, any device; shared by the trainer and the step benchmark.
#include "core/data/dataset.h"
#include "core/models/task.h"
#include "core/training/objective.h"
#include "core/util/precision.h"

#include <ATen/core/Generator.h>

#include <cstdint>
#include <map>
#include <string>

namespace torch::optim {
class Optimizer;
}

namespace comera {

struct StepResult {
  double objective = 0;     // the stage's objective (what was minimised)
  double task_loss = 0;     // L, mean over the predictions
  double size = 0;          // surrogate in units of its initial value
  int64_t correct = 0;      // right predictions
  int64_t predictions = 0;  // examples, or masked tokens
  int64_t tokens = 0;       // inputs processed
  bool finite = true;       // false: the objective was NaN/inf, nothing was updated
  bool stop = false;        // a stop was requested (on any rank, when data-parallel)
};

class DataParallel;

// `batch` has been through task.prepare and lies on the model's device. The step reads the
// device once, after the forward pass: the NaN guard and the reported values need the
// objective before anything is updated. With `parallel`, `batch` is this rank's shard: the
// reported values are the whole batch's, the gradients summed over the ranks
// (data_parallel.h), and `stop_requested` is agreed on, so all ranks stop at the same step.
// The forward pass runs in `precision` (precision.h); everything after it in float32.
StepResult training_step(Task& task, torch::optim::Optimizer& optimizer, const Objective& objective,
                         double clip_grad_norm, const Batch& batch, DataParallel* parallel = nullptr,
                         bool stop_requested = false, Precision precision = Precision::Fp32);

// Scales the gradients so that their joint 2-norm is at most max_norm (as
// torch::nn::utils::clip_grad_norm_), computed on the device without reading it back.
void clip_gradients(const std::vector<at::Tensor>& parameters, double max_norm);

struct EvalResult {
  double loss = 0;  // mean task loss per prediction
  double accuracy = 0;
  int64_t predictions = 0;  // examples, or masked tokens
  // What only some tasks report, by name: "auc" for binary tasks (TaskOutput::scores).
  std::map<std::string, double> metrics;
};

// The whole set in order, the last batch short (nothing dropped), on `device`; the model's
// train/eval mode is restored afterwards. Random corruption comes from a fixed seed, so every
// evaluation of a run scores the same inputs, whichever rank scores a batch. Reads the
// device once, at the end. With `parallel`, rank r scores batches r, r + W, ... and the results
// are combined over the ranks (every rank returns the same).
EvalResult evaluate(Task& task, const Dataset& data, int64_t batch_size, const c10::Device& device,
                    DataParallel* parallel = nullptr, Precision precision = Precision::Fp32);

}  // namespace comera
