#pragma once
// The trial life cycle shared by sweep workers: enqueue, claim, heartbeat, finish, and recovery
// of trials whose worker died. Each call is one short write transaction.
#include "core/util/error.h"
#include "search/environment.h"
#include "search/store/objectives.h"
#include "search/store/studies.h"
#include "search/store/trials.h"
#include "search/store/worker_id.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace comera::store {

// Adds one queued trial per config (stored canonical; its "seed" key, when an integer, fills the
// seed column). A config already in the study is not added again: returns each config's trial id.
std::vector<int64_t> enqueue_trials(ResultsDb& db, const Study& study,
                                    const std::vector<nlohmann::json>& configs);

// Takes the lowest-numbered queued trial of the study and marks it running under this worker and
// environment. Atomic across processes (BEGIN IMMEDIATE): no two workers get the same trial.
std::optional<Trial> claim_next_trial(ResultsDb& db, int64_t study_id, const std::string& worker,
                                      const Environment& env);

// The same among the given trial ids only (a shard's share of a study); nullopt when none of
// them is queued.
std::optional<Trial> claim_next_trial_among(ResultsDb& db, int64_t study_id,
                                            const std::vector<int64_t>& ids,
                                            const std::string& worker, const Environment& env);

// A `comera train` run: a new running trial of the "runs" study (created on demand), a repeat of
// an earlier config getting the next replica number.
Trial start_run(ResultsDb& db, const nlohmann::json& config, const std::string& worker,
                const Environment& env);

// A `comera train --resume` of a trial that ended failed or killed under `worker`, or that a
// killed process left running (its checkpoint's lock, taken first, says none holds it): running
// again, one attempt more. False when it is not in such a state under that worker.
bool resume_trial(ResultsDb& db, int64_t trial_id, const std::string& worker);

// Refreshes the heartbeat (record_epoch does too); false when the trial is no longer running
// under this worker (it was declared stale, and maybe re-queued): the worker should then stop.
// Call it more often than the staleness limit; a heartbeat thread needs its own ResultsDb (one
// connection must not be used by two threads at once).
bool heartbeat(ResultsDb& db, int64_t trial_id, const std::string& worker);

// Thrown by require_held: the trial is no longer the worker's to record into.
class LostClaim : public Error {
 public:
  using Error::Error;
};

// Throws LostClaim, naming the trial's state and holder, unless it is running under `worker`: a
// run that lost its claim (declared stale, claimed again) records nothing more into it. Call it
// inside the db.write() that records.
void require_held(ResultsDb& db, int64_t trial_id, const std::string& worker);

// Ends a trial as complete, failed, diverged, killed or pruned, with its final objective values. Only
// the worker that claimed it may finish it (also after it was declared stale, if not re-queued).
// A complete trial must report every objective of its study.
void finish_trial(ResultsDb& db, int64_t trial_id, const std::string& worker, TrialState state,
                  const ObjectiveValues& objectives = {}, const std::string& error = "");

// Marks running trials whose heartbeat is older than max_age_s as failed, among those whose
// worker by_heartbeat accepts (a worker whose process can be looked up is judged by that
// instead); returns how many.
int mark_stale_trials(ResultsDb& db, double max_age_s,
                      const std::function<bool(const std::string& worker)>& by_heartbeat);

// Puts the study's failed trials back in the queue, dropping their partial results.
int requeue_failed(ResultsDb& db, int64_t study_id);

// Puts one trial back in the queue if it is still in `state` under `worker` (a trial interrupted
// by a kill, or whose worker process is gone); false otherwise. Its epochs so far are kept: it
// resumes from its checkpoint, and an epoch run again replaces its record.
bool requeue_trial(ResultsDb& db, int64_t trial_id, TrialState state, const std::string& worker);

}  // namespace comera::store
