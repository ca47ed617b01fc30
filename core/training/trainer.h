#pragma once
// The bi-objective trainer (METHOD §3): early stage, optional late stage, physical rank
// truncation, per-epoch evaluation and metrics, checkpoints with resume, NaN guard. Any model
// kind and task (core/models/model_kind.h), optimiser and device; it prints nothing and reports
// through the callbacks of TrainerOptions.
#include "core/data/task_data.h"
#include "core/models/model_kind.h"
#include "core/training/checkpoint.h"
#include "core/training/check_schedule.h"
#include "core/training/checkpoint_lock.h"
#include "core/training/epoch_metrics.h"
#include "core/training/late_cuts.h"
#include "core/training/objective.h"
#include "core/training/train_config.h"
#include "core/training/training_step.h"
#include "core/util/accelerator.h"
#include "core/util/memory_meter.h"

#include <ATen/core/Generator.h>
#include <c10/core/Device.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace torch::optim {
class Optimizer;
}

namespace comera {

class DataParallel;

// Where a run stands, for a progress line.
struct TrainingProgress {
  bool evaluating = false;  // the epoch's evaluation has begun (the rest is the last step's)
  int64_t epoch = 0, epochs = 0;            // 0-based epoch in progress, of so many
  std::string stage;                        // "early" | "late"
  int64_t step_in_epoch = 0, batches = 0;   // batches of this epoch done, of so many
  int64_t eval_examples = 0;
  double loss = 0, accuracy = 0;            // means over the epoch so far
  int64_t params = 0;                       // model size now
  double compression = 0;                   // against the same model dense
  double seconds_per_step = 0;
  double seconds_left = 0;                  // to the end of the run (or its step limit)
};

struct TrainerOptions {
  std::string checkpoint;       // file written at epoch ends (and every N steps); "" = none
  bool resume = false;          // continue from `checkpoint` when it exists
  // Where a copy of the checkpoint at the end of the early stage goes (a late stage that starts
  // at an epoch), unless one is there: runs that differ only in late-stage settings resume from
  // it (search/runs/shared_early_stage.h). Its training seconds are those of the epoch's record.
  // "" = none.
  std::string early_stage_copy;
  // > 0: stop (resumably) once this many steps are done in total; unlike training.max_steps
  // the learning-rate schedule still spans the configured run.
  int64_t stop_at_step = 0;
  int64_t memory_baseline = -1;  // bytes of RSS counted as idle; -1: measured at construction
  double progress_interval_s = 1;  // on_progress at most this often while training
  std::function<void(const TrainingProgress&)> on_progress;
  // Notices worth a line (a resume with changed settings, an initialisation).
  std::function<void(const std::string&)> on_notice;
  // Called at each epoch's end, just before its checkpoint is written.
  std::function<void(const EpochMetrics&)> on_epoch;
  // Asked after each epoch's checkpoint: true ends the run there, resumably (StepLimit), as a
  // sweep does with a trial it prunes. Single-process runs only (ranks would have to agree).
  std::function<bool(const EpochMetrics&)> stop_after_epoch;
  // With stop_at_check set: at the steps `checks` names the trainer evaluates and asks
  // stop_at_check; true ends the run there, resumably (StepLimit), its partial epoch reported
  // with those values. The evaluation leaves training unchanged. Single-process runs only, as
  // stop_after_epoch.
  CheckSchedule checks;
  std::function<bool(const EpochMetrics&)> stop_at_check;
  // Called after every optimiser step.
  std::function<void()> on_step;
  // Set (e.g. by a signal handler) to stop at the next step: the checkpoint is written and the
  // run ends Interrupted, resumable.
  const std::atomic<bool>* stop = nullptr;
  // Set when the run's record is no longer its own (its trial claimed elsewhere): it stops as
  // for `stop`, and whoever set it decides what, if anything, is recorded.
  const std::atomic<bool>* lost = nullptr;
  // Data-parallel: this process is one rank of the run (core/distributed/data_parallel.h). Every
  // rank builds the same trainer; rank 0 alone writes the checkpoint and should alone report.
  DataParallel* parallel = nullptr;
  // Off: every op takes its composite ATen path (core/kernels/fast_kernels.h), for this
  // trainer alone.
  bool fast_kernels = true;
};

enum class RunStatus { Completed, StepLimit, Diverged, Interrupted };
// "completed" | "step_limit" | "diverged" | "interrupted"
const char* run_status_name(RunStatus status);

struct RunResult {
  RunStatus status = RunStatus::Completed;
  std::string message;
  int64_t steps = 0;
  std::vector<EpochMetrics> epochs;  // of this invocation (a resume reports the rest)
};

class Trainer {
 public:
  // Seeds its own generator from training.seed (the model's initialisation, masked-LM
  // corruption and dropout draw from it, not from the global one), builds the model for the task on the configured
  // device and its optimiser, and resumes from the checkpoint when asked and present. Every
  // error (a model that cannot read the data, an optimiser that cannot follow truncation, a
  // device this machine lacks, a foreign checkpoint) comes from here, before any training.
  Trainer(ModelSpec model, TrainConfig training, TaskData data, TrainerOptions options = {});
  ~Trainer();

  RunResult run();

  Task& task() { return *task_; }
  torch::nn::Module& model() { return task_->model(); }
  torch::optim::Optimizer& optimizer() { return *optimizer_; }
  const Objective& objective() const { return *objective_; }
  const TrainerState& state() const { return state_; }
  const c10::Device& device() const { return device_; }
  bool resumed() const { return resumed_; }
  // Nothing left to train (a resume of a run that already ended).
  bool finished() const;

 private:
  bool late_due() const;
  void start_late();
  // At an epoch's end where the late stage begins next (by epoch), nothing of it run yet.
  bool at_late_start() const;
  // Writes the checkpoint just written again to options_.early_stage_copy, unless one is there,
  // its training seconds those the epoch recorded (`recorded_s`, before the evaluation): a run
  // resumed from it then adds only its own to the seconds its epochs say were shared.
  void keep_early_stage(double recorded_s);
  // Seconds of training of the run so far, over every process that ran it (TrainerState::elapsed_s).
  double elapsed() const;
  // The configured learning rates, with the late stage's rank-vector rate once it runs.
  OptimizerConfig stage_rates() const;
  void truncate();
  // Truncation that leaves a pending late-stage cut alone (its slices may come back).
  void truncate_unless_trying();
  void report(const CutDecision& decision) const;
  EpochMetrics epoch_metrics(bool partial, int64_t batches, double elapsed_s);
  void restart_memory_peaks();
  // Writes the checkpoint unless a parameter is not finite (then false: the last finite
  // checkpoint stays).
  bool save();
  // What a diverged run keeps, for its message.
  std::string kept_checkpoint() const;
  TrainingProgress progress(int64_t batches, int64_t end_step) const;
  void notice(const std::string& text) const;

  ModelSpec model_spec_;
  TrainConfig config_;
  TaskData data_;
  TrainerOptions options_;
  c10::Device device_;
  std::unique_ptr<Task> task_;
  // Host-side draws (masked-LM corruption) and dropout seeds: checkpointed with the run.
  at::Generator generator_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  std::unique_ptr<Objective> objective_;
  std::unique_ptr<LateCuts> cuts_;  // a late stage with control "cut", once it runs
  TrainerState state_;
  bool resumed_ = false;
  // Gradient all-reduce seconds (cumulative) at the start of the epoch in progress.
  double all_reduce_seconds_at_epoch_ = 0;
  int64_t memory_baseline_ = 0;
  CpuMemoryMeter tensor_memory_;  // restarted with each epoch
  std::optional<DeviceMemoryPeak> device_memory_;  // on a GPU, restarted with each epoch
  int64_t saved_step_ = -1;  // step of the last checkpoint written (or resumed from); -1: none
  // Training time: the state's when this process's run() began, and when that was.
  double elapsed_before_ = 0;
  std::chrono::steady_clock::time_point run_start_ = std::chrono::steady_clock::now();
  std::unique_ptr<CheckpointLock> lock_;
  std::set<std::string> lost_layers_;  // layers already named in a notice
};

}  // namespace comera
