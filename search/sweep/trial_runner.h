#pragma once
// A sweep worker's trials: each claimed trial runs through the one trial lifecycle
// (search/runs/claimed_trial.h), with its own checkpoint beside the database, so a trial
// interrupted or killed resumes where its checkpoint left it. Data sets are loaded once per
// process and kept for the trials after (most sweeps share one).
#include "core/data/task_data.h"
#include "search/runs/claimed_trial.h"
#include "search/store/results_db.h"
#include "search/store/trials.h"

#include <map>
#include <string>

namespace comera::sweep {

class TrialRunner {
 public:
  // `device`, when given, is where every trial computes, in place of its training.device.
  explicit TrialRunner(ClaimedTrialOptions options, std::string device = "");
  TrialRunner(const TrialRunner&) = delete;
  TrialRunner& operator=(const TrialRunner&) = delete;

  // See run_claimed_trial.
  store::TrialState run(store::ResultsDb& db, const store::Trial& trial, const std::string& worker) {
    return run_claimed_trial(db, trial, worker, options_);
  }

 private:
  const TaskData& data(const DataConfig& config);

  ClaimedTrialOptions options_;
  std::map<std::string, TaskData> data_;  // by the data section's JSON
};

}  // namespace comera::sweep
