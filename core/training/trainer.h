#pragma once
// The bi-objective trainer (METHOD §3): early stage, optional late stage, physical rank
// truncation, per-epoch evaluation and metrics, checkpoints with resume, NaN guard, progress.
#include "core/data/pair_dataset.h"
#include "core/models/model_config.h"
#include "core/models/transformer.h"
#include "core/training/checkpoint.h"
#include "core/training/epoch_metrics.h"
#include "core/training/objective.h"
#include "core/training/train_config.h"
#include "core/training/training_step.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace torch::optim {
class AdamW;
}

namespace comera {

struct TrainerOptions {
  std::string checkpoint;       // file written at epoch ends (and every N steps); "" = none
  bool resume = false;          // continue from `checkpoint` when it exists
  // > 0: stop (resumably) once this many steps are done in total; unlike training.max_steps
  // the learning-rate schedule still spans the configured run.
  int64_t stop_at_step = 0;
  bool progress = true;         // live progress line on stderr
  bool log_epochs = true;       // one summary line per epoch on stderr
  int64_t memory_baseline = -1;  // bytes of RSS counted as idle; -1: measured at construction
  // training.task masked_lm: the vocabulary's [MASK] and special ids and its size (from the
  // task data, see masking_options); the probability comes from the training settings.
  MaskingOptions masking;
  // Called after each epoch's checkpoint is written.
  std::function<void(const EpochMetrics&)> on_epoch;
  // Called after every optimiser step (e.g. a database heartbeat).
  std::function<void()> on_step;
};

enum class RunStatus { Completed, StepLimit, Diverged };
const char* run_status_name(RunStatus status);  // "completed" | "step_limit" | "diverged"

struct RunResult {
  RunStatus status = RunStatus::Completed;
  std::string message;
  int64_t steps = 0;
  std::vector<EpochMetrics> epochs;  // of this invocation (a resume reports the rest)
};

class Trainer {
 public:
  // Seeds everything from training.seed, builds the model and optimiser, and resumes from the
  // checkpoint when asked and present.
  Trainer(ModelConfig model, TrainConfig training, const PairDataset& train,
          const PairDataset& eval, TrainerOptions options = {});
  ~Trainer();

  RunResult run();

  Transformer& model() { return model_; }
  torch::optim::AdamW& optimizer() { return *optimizer_; }
  const Objective& objective() const { return *objective_; }
  const TrainerState& state() const { return state_; }
  bool resumed() const { return resumed_; }
  // Nothing left to train (a resume of a run that already ended).
  bool finished() const;

 private:
  bool late_due() const;
  void start_late();
  // The configured learning rates, with the late stage's rank-vector rate once it runs.
  OptimizerConfig stage_rates() const;
  EpochMetrics epoch_metrics(bool partial, double elapsed_s);
  void save();
  std::string progress_text(int64_t batches, int64_t end_step, double seconds_per_step) const;

  ModelConfig model_config_;
  TrainConfig config_;
  const PairDataset& train_;
  const PairDataset& eval_;
  TrainerOptions options_;
  Transformer model_{nullptr};
  std::unique_ptr<torch::optim::AdamW> optimizer_;
  std::unique_ptr<Objective> objective_;
  TrainerState state_;
  StepTask task_;
  bool resumed_ = false;
  int64_t memory_baseline_ = 0;
};

}  // namespace comera
