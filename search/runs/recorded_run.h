#pragma once
// One recorded training run, the path `comera train` and sweep workers share: the experiment's
// trainer on its data (every error before any training or record), the trial it is recorded as
// (epochs, ranks, heartbeats, the final state), and the contraction plans of its TT layers
// (training.contraction, re-chosen as truncation changes ranks).
#include "core/training/experiment.h"
#include "core/training/trainer.h"
#include "search/runs/claim_heartbeat.h"
#include "search/runs/trial_recorder.h"
#include "search/store/decisions.h"
#include "search/store/trials.h"

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace comera::tuner {
class Tuner;
}

namespace comera {

struct RecordedRunOptions {
  std::string checkpoint;  // "" = none
  bool resume = true;      // continue from the checkpoint when it exists
  std::string early_stage_copy;  // see TrainerOptions::early_stage_copy
  int64_t memory_baseline = -1;
  const std::atomic<bool>* stop = nullptr;  // see TrainerOptions::stop
  DataParallel* parallel = nullptr;         // see TrainerOptions::parallel
  int64_t stop_at_step = 0;                 // see TrainerOptions::stop_at_step
  // Sets the trainer's progress and notice callbacks.
  std::function<void(TrainerOptions&)> configure_trainer;
  // Lines worth showing (contraction plans chosen, the tuner's measurements).
  std::function<void(const std::string&)> on_message;
  // Asked after each recorded epoch (a sweep's pruning rule): a decision stops the run there
  // and ends its trial pruned, resumable, with the decision recorded. Unset: never.
  std::function<std::optional<store::Decision>(const EpochMetrics&)> prune;
  // With prune set: also at the steps these name inside an epoch, the run evaluates, records
  // the check (store/checks.h) and asks prune with those values (partial set).
  CheckSchedule checks;
  // How often the recorded trial's heartbeat is written.
  std::chrono::milliseconds heartbeat_interval = kHeartbeatInterval;
};

class RecordedRun {
 public:
  // Builds the trainer; `db` (may be null) holds the stored contraction choices.
  RecordedRun(const ExperimentConfig& experiment, TaskData data, RecordedRunOptions options,
              store::ResultsDb* db = nullptr);
  ~RecordedRun();

  Trainer& trainer() { return *trainer_; }
  // Records the run as trial `trial_id` of `db`, held by `worker`, whose heartbeat it keeps
  // from now on (claim_heartbeat.h).
  void record_in(store::ResultsDb& db, int64_t trial_id, const std::string& worker);
  // Chooses the contraction plans, trains, and finishes the trial: complete, diverged, killed
  // (a step limit or an interruption: resumable), pruned (options.prune decided so: resumable),
  // or failed with an error, which is rethrown.
  // A run whose trial was claimed by another worker meanwhile stops, records nothing (the trial
  // is no longer its own) and throws.
  RunResult run();
  // The decision that pruned the run, if one did.
  const std::optional<store::Decision>& pruned() const { return pruned_; }

 private:
  void plan_layers();

  ExperimentConfig experiment_;
  RecordedRunOptions options_;
  store::ResultsDb* db_;
  std::unique_ptr<TrialRecorder> recorder_;
  std::atomic<bool> lost_{false};
  std::unique_ptr<ClaimHeartbeat> heartbeat_;
  std::unique_ptr<tuner::Tuner> tuner_;
  std::unique_ptr<Trainer> trainer_;
  int planned_ = -1;  // layers off the merged path at the last report
  std::optional<store::Decision> pruned_;
};

// The folder of a study's checkpoints (its trials' and their early-stage copies): beside its
// database, by study.
std::string checkpoint_folder(const std::string& db_path, const std::string& study);

// Where a sweep keeps the checkpoint of a trial: in checkpoint_folder, by number and uid
// (unique across databases, so shards in one folder never share one).
std::string trial_checkpoint(const std::string& db_path, const store::Trial& trial);

}  // namespace comera
