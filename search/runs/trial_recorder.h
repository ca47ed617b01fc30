#pragma once
// Connects a training run to the results database: each epoch's metrics and per-layer ranks,
// and the final state with its objective values (heartbeats: claim_heartbeat.h). Used by
// `comera train` and by sweep workers for the trials they claim.
#include "core/training/epoch_metrics.h"
#include "core/training/experiment.h"
#include "core/training/trainer.h"
#include "search/store/decisions.h"
#include "search/store/results_db.h"
#include "search/store/trial_queue.h"

#include <chrono>
#include <string>
#include <vector>

namespace comera {

// How often a running trial writes its heartbeat (claim_heartbeat.h). A trial on
// another host is declared dead by heartbeat age alone, and the process judging it does not know
// this one's settings, so sweeps accept no staleness limit below kMinStaleAfter: four beats.
inline constexpr std::chrono::seconds kHeartbeatInterval{15};
inline constexpr std::chrono::seconds kMinStaleAfter = 4 * kHeartbeatInterval;

// The metrics TrialRecorder::epoch records every epoch: the objectives a training trial can have.
// `task_metrics`: what the trial's task adds (ModelKind::eval_metrics, e.g. "auc").
std::vector<std::string> recorded_metric_names(const std::vector<std::string>& task_metrics = {});
// What a trial that times single steps records (claimed_trial.h).
const std::vector<std::string>& step_objective_names();
// The objectives a trial of experiment `e` records at its end (`step`: one that times single
// steps): the late stage's targets only with a late stage, the all-reduce figures only with
// training.nproc > 1.
std::vector<std::string> recorded_objectives(const ExperimentConfig& e, bool step);
// Why a trial recording `recorded` records no `objective` ("" when it does).
std::string unrecorded_reason(const std::vector<std::string>& recorded, const std::string& objective);


class TrialRecorder {
 public:
  TrialRecorder(store::ResultsDb& db, int64_t trial_id, std::string worker);

  int64_t trial_id() const { return trial_id_; }
  // Records the epoch's metrics (the store's standard names plus train_accuracy,
  // tensorized_size, size_mb, elapsed_s) and the effective ranks of every tensorized layer.
  void epoch(const EpochMetrics& metrics);
  // Records an evaluation inside an epoch (TrainerOptions::stop_at_check): the same values, by step.
  void check(const EpochMetrics& metrics);
  // Complete (objectives: the last epoch's metrics), diverged, or killed (a step limit or an
  // interruption: resumable).
  void finish(const RunResult& result);
  // Pruned (resumable), the decision recorded with it.
  void pruned(const store::Decision& decision);
  // Complete with measured objectives (a trial that times single steps, no epochs).
  void measured(const store::ObjectiveValues& objectives);
  // Failed, with the error message.
  void fail(const std::string& error);

 private:
  store::ResultsDb& db_;
  int64_t trial_id_;
  std::string worker_;
  store::ObjectiveValues last_;
};

}  // namespace comera
