#pragma once
// The lifecycle of a trial a worker has claimed (a sweep's): built from its stored config
// (trial_config.h), run, and recorded to its end. Its config says how it runs: single steps
// timed (a "step" section), a training run through RecordedRun (resuming from its checkpoint),
// or data-parallel ranks launched as `comera train --nproc N --trial ID`, which records into
// the same trial through the same RecordedRun.
#include "core/data/task_data.h"
#include "core/training/trainer.h"
#include "search/store/decisions.h"
#include "search/store/results_db.h"
#include "search/store/trials.h"

#include <atomic>
#include <functional>
#include <optional>
#include <string>

namespace comera {

struct ClaimedTrialOptions {
  // Lines worth showing (data loaded, a resume, a failure).
  std::function<void(const std::string&)> on_message;
  // Sets the trainer's own callbacks (progress, epochs) on each trial's options.
  std::function<void(TrainerOptions&)> configure_trainer;
  // Set by a signal: the running trial checkpoints and ends killed (resumable).
  const std::atomic<bool>* stop = nullptr;
  // The comera executable, which runs a trial asking for training.nproc > 1 (its ranks need
  // processes of their own); "" = such trials fail, saying so.
  std::string program;
  // Where every trial computes, in place of its training.device ("" = its own).
  std::string device;
  // A sweep's pruning rule, asked after each recorded epoch of a single-process training trial
  // (RecordedRunOptions::prune; data-parallel trials run to their end); unset: never.
  std::function<std::optional<store::Decision>(const store::Trial&, const EpochMetrics&)> prune;
  // Also at these steps inside epochs (RecordedRunOptions::checks); by default none.
  CheckSchedule checks;
  // The data of a data section (a sweep keeps one copy per process); unset = loaded afresh.
  std::function<const TaskData&(const DataConfig&)> data;
};

// Runs `trial` (claimed by `worker`) to its end and records it: complete, diverged, killed
// (resumable), pruned (resumable) or failed with the error message. An error never escapes, so a sweep goes on.
// Returns the state it ended in.
store::TrialState run_claimed_trial(store::ResultsDb& db, const store::Trial& trial, const std::string& worker,
                                    const ClaimedTrialOptions& options);

}  // namespace comera
