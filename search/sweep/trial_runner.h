#pragma once
// Trains claimed sweep trials through the recorded-run path (search/runs/recorded_run.h), each
// with its own checkpoint beside the database, so a trial interrupted or killed resumes where
// its checkpoint left it. Data sets are loaded once per process and kept for the
// trials after (most sweeps share one).
#include "core/data/task_data.h"
#include "core/training/trainer.h"
#include "search/store/results_db.h"
#include "search/store/trials.h"

#include <atomic>
#include <functional>
#include <map>

#include <nlohmann/json_fwd.hpp>
#include <string>

namespace comera::sweep {

// How a trial reports: lines worth showing (data loaded, a failure) and the trainer's own
// callbacks (progress, epochs), which `configure_trainer` sets on each trial's options.
struct TrialReporting {
  std::function<void(const std::string&)> on_message;
  std::function<void(TrainerOptions&)> configure_trainer;
  // Set by a signal: the running trial checkpoints and ends killed (resumable).
  const std::atomic<bool>* stop = nullptr;
  // The comera executable, which runs a trial asking for training.nproc > 1 as
  // `comera train --nproc N` (its ranks need processes of their own); "" = such trials fail.
  std::string program;
};

class TrialRunner {
 public:
  // `device`, when given, is where every trial computes, in place of its training.device.
  explicit TrialRunner(TrialReporting reporting, std::string device = "")
      : reporting_(std::move(reporting)), device_(std::move(device)) {}

  // Trains trial.config["experiment"] (or times its single steps, when the config has "step")
  // and finishes the trial in the database: complete,
  // diverged, or failed with the error message (an error never escapes, so a sweep goes on).
  // Returns the state it ended in.
  store::TrialState run(store::ResultsDb& db, const store::Trial& trial, const std::string& worker);

 private:
  const TaskData& data(const DataConfig& config);
  // A trial of several data-parallel ranks: `comera train --nproc N` records into the trial
  // (rank 0 holds it as `worker`); its state in the database afterwards is the outcome.
  store::TrialState run_ranks(store::ResultsDb& db, const store::Trial& trial, const std::string& worker,
                              const nlohmann::json& experiment, int64_t nproc);

  void message(const std::string& text) const;

  TrialReporting reporting_;
  std::string device_;
  std::map<std::string, TaskData> data_;  // by the data section's JSON
};

}  // namespace comera::sweep
