#pragma once
// A model bound to what it is trained for: the one interface the trainer, evaluation, the step
// benchmark, checkpoints and the tuner use, whatever the model kind (model_kind.h) and task.
#include "core/data/batch.h"

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>

namespace torch::nn {
class Module;
}

namespace comera {

class Dataset;

// The training section's choice of task ("classification", "masked_lm", ...), with its
// settings; the model kind says which tasks it can be trained for.
struct TaskSpec {
  std::string kind = "classification";
  double mask_probability = 0.15;  // masked LM: share of tokens chosen
};

// One batch's task loss and the counts behind the epoch metrics, as tensors on the model's
// device, so that a step reads them back in one go rather than one synchronisation each.
struct TaskOutput {
  at::Tensor loss;          // mean over the predictions (scalar, differentiable)
  at::Tensor correct;       // right predictions (scalar)
  at::Tensor tokens;        // inputs the step processed, e.g. non-padding tokens (scalar)
  int64_t predictions = 0;  // what the loss averages over: examples, or masked tokens
  // Binary tasks: each prediction's probability of the positive class and its 0/1 target
  // (detached), from which evaluation computes the AUC. Undefined for other tasks.
  at::Tensor scores, targets;
};

class Task {
 public:
  virtual ~Task() = default;
  // The model being trained; the trainer moves it to its device and owns its optimiser.
  virtual torch::nn::Module& model() = 0;
  const torch::nn::Module& model() const { return const_cast<Task*>(this)->model(); }
  // On the host, before the batch moves to the device: random corruption of the inputs
  // (masked LM) drawn from `generator`, a CPU generator, so a run draws the same on every
  // device.
  virtual Batch prepare(Batch batch, const at::Generator& generator) const {
    (void)generator;
    return batch;
  }
  // Forward and task loss of a prepared batch that lies on the model's device.
  virtual TaskOutput forward(const Batch& batch) = 0;
  // Parameters and buffers (by module path) of the task's heads, which a run initialised from
  // a pre-training checkpoint does not take from it.
  virtual bool is_head(const std::string& name) const = 0;
  // Rows the tensorized layer at module path `layer` multiplies per step, for `batch`
  // examples of `length` tokens (the tuner keys its contraction plans on it).
  virtual int64_t layer_rows(const std::string& layer, int64_t batch, int64_t length) const = 0;
  // An error naming the fix when evaluation on `eval` could not report what the task reports
  // (AUC of an evaluation set with one label); checked before training.
  virtual void check_eval_set(const Dataset& eval) const { (void)eval; }
  // Whether its batches are token sequences that training.length_phases may cut; a task
  // without them refuses phases before training starts.
  virtual bool has_sequences() const { return false; }
  // The batch cut to its first `length` tokens (a task with sequences).
  virtual Batch cut_to_length(Batch batch, int64_t length) const {
    (void)length;
    return batch;
  }
  // Random inputs and targets of the task's shapes, for benchmarks (no data needed).
  virtual Batch synthetic_batch(int64_t batch, int64_t length, const at::Generator& generator) const = 0;
};

}  // namespace comera
