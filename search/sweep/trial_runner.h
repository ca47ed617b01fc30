#pragma once
// Trains claimed sweep trials and records them (epochs, ranks, final state and objectives)
// through the trainer's TrialRecorder. Data sets are loaded once per process and kept for the
// trials after (most sweeps share one).
#include "core/training/task_data.h"
#include "search/store/results_db.h"
#include "search/store/trials.h"

#include <map>
#include <string>

namespace comera::sweep {

class TrialRunner {
 public:
  explicit TrialRunner(bool progress) : progress_(progress) {}

  // Trains trial.config["experiment"] (or times its single steps, when the config has "step")
  // and finishes the trial in the database: complete,
  // diverged, or failed with the error message (an error never escapes, so a sweep goes on).
  // Returns the state it ended in.
  store::TrialState run(store::ResultsDb& db, const store::Trial& trial, const std::string& worker);

 private:
  const TaskData& data(const DataConfig& config);

  bool progress_;
  std::map<std::string, TaskData> data_;  // by the data section's JSON
};

}  // namespace comera::sweep
