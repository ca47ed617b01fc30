#pragma once
// Adaptive sweeps ("sampling": {"method": "adaptive", ...}): each new trial is proposed from what
// the study has recorded so far (search/propose/proposer.h), enqueued with a decision saying why,
// and run like any other. Proposing happens inside one write transaction that first reads the
// study, so workers on one database take turns: each sees the others' queued and running trials
// as pending and proposes elsewhere. Proposals depend only on the spec's seed and the recorded
// trials, so an interrupted sweep, run again, proposes what it would have.
#include "search/propose/proposer.h"
#include "search/store/results_db.h"
#include "search/store/studies.h"
#include "search/sweep/sweep_spec.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace comera::sweep {

// The axes after the seeds as a search space: ranges are real or integer axes (log when the
// range is), lists are choices.
propose::Space search_space(const SweepSpec& spec);

// A trial's position in that space, read back from its point labels; nullopt for a trial that
// is not a point of the space (a baseline, a trial of another spec).
std::optional<propose::Values> point_values(const SweepSpec& spec, const nlohmann::json& config);

// What the study has spent against the budget: trials proposed, epochs recorded by all its
// trials (pruned ones count what they ran, an epoch stopped inside its fraction), minutes of training recorded (each trial's last
// elapsed_s).
struct Spent {
  int64_t trials = 0;
  double epochs = 0, minutes = 0;
};
Spent spent(store::ResultsDb& db, const std::string& study);
// "adaptive sampling (gp-ehvi, seed 0), budget 13 epochs": how an adaptive spec proposes.
std::string describe_sampling(const SweepSpec& spec);

// "" while within the budget, else what ran out ("12 trials proposed, the budget's 12").
std::string budget_spent(const Budget& budget, const Spent& spent);

// What a proposal learns from: the study's trials that are points of the space, with the
// objectives in their own units. Complete trials give their final values; pruned ones the values
// they had when stopped (their pruning decision's); failed and diverged ones NaN (where not to
// go); queued, running and killed ones are pending, someone's point already.
struct StudyHistory {
  std::vector<propose::Observation> done;
  std::vector<propose::Values> pending;
};
StudyHistory study_history(store::ResultsDb& db, const std::string& study, const SweepSpec& spec,
                           const std::vector<store::Objective>& objectives);

struct ProposeOutcome {
  std::optional<int64_t> trial_id;  // the trial enqueued; unset when none was
  std::string message;              // what was proposed and why, or why nothing was
};

// Proposes the next point of an adaptive sweep and enqueues its trial with a "proposed"
// decision, in one write transaction. Nothing when the budget is spent or the proposal repeats
// a trial already in the study (a discrete space exhausted).
ProposeOutcome propose_next(store::ResultsDb& db, const store::Study& study, const SweepSpec& spec);

}  // namespace comera::sweep
