#pragma once
// Connects a training run to the results database: each epoch's metrics and per-layer ranks,
// heartbeats while it runs, and the final state with its objective values. Used by
// `comera train` and by sweep workers for the trials they claim.
#include "core/training/epoch_metrics.h"
#include "core/training/trainer.h"
#include "search/store/results_db.h"
#include "search/store/trial_queue.h"

#include <chrono>
#include <string>

namespace comera {

// The run's config as stored with its trial: the experiment, with the seed at the top level
// (the store's seed column).
nlohmann::json trial_config(const nlohmann::json& experiment, uint64_t seed);

class TrialRecorder {
 public:
  TrialRecorder(store::ResultsDb& db, int64_t trial_id, std::string worker);

  int64_t trial_id() const { return trial_id_; }
  // Records the epoch's metrics (the store's standard names plus train_accuracy,
  // tensorized_size, size_mb, elapsed_s) and the effective ranks of every tensorized layer.
  void epoch(const EpochMetrics& metrics);
  // Refreshes the heartbeat at most once a minute; cheap enough to call every step.
  void heartbeat();
  // Complete (objectives: the last epoch's metrics), diverged, or killed (a step limit or an
  // interruption: resumable).
  void finish(const RunResult& result);
  // Failed, with the error message.
  void fail(const std::string& error);

 private:
  store::ResultsDb& db_;
  int64_t trial_id_;
  std::string worker_;
  store::ObjectiveValues last_;
  std::chrono::steady_clock::time_point last_beat_;
};

}  // namespace comera
