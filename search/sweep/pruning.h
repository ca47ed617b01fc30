#pragma once
// Early stopping of dominated trials (a spec's "pruning"): at each epoch end from `from_epoch`
// on (epochs as the database numbers them: 0 is the first), and with `every_steps` also at each
// check inside those epochs (an evaluation every so many steps), a trial is stopped, and
// recorded pruned, when another trial of the study had done better at the same epoch end (or
// the same step) in every objective, by at least the margin in each. The margin of an
// objective is the larger of the one given and `noise` times the seed-to-seed standard
// deviation the study itself measured at that epoch (trials alike but for their seed), so seed
// noise alone never prunes where the study repeats its points over seeds.
#include "search/store/decisions.h"
#include "search/store/results_db.h"
#include "search/store/studies.h"
#include "search/store/trials.h"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace comera::sweep {

struct PruningRule {
  int64_t from_epoch = 0;                // the first epoch judged (0: the first of all)
  std::map<std::string, double> margin;  // by objective, in its units; 0 where not given
  double noise = 2;                      // standard deviations of seed noise a margin covers
  int64_t every_steps = 0;               // > 0: also judged every so many steps inside epochs
  // false: no checks inside late-stage epochs, where trials cross while their cuts are judged.
  bool late_checks = true;
};

// Where a trial is judged: an epoch's end, or a check inside it at `step`.
struct JudgedAt {
  JudgedAt(int64_t epoch, std::optional<int64_t> step = std::nullopt) : epoch(epoch), step(step) {}
  int64_t epoch;
  std::optional<int64_t> step;
};

// Reads {"from_epoch", "margin": {objective: value >= 0}, "noise", "every_steps", "late_checks"}; errors name the key, and a
// margin of an objective the study does not have names the objectives it has.
PruningRule parse_pruning(const nlohmann::json& json, const std::vector<store::Objective>& objectives);
nlohmann::json to_json(const PruningRule& rule);

// One trial's values at the judged epoch.
struct EpochValues {
  int64_t trial = 0;                      // its number in the study
  std::string group;                      // trials alike but for their seed share a group
  std::map<std::string, double> values;   // by objective; a missing or NaN value compares with nothing
};

// The decision for `me` at `at` against the other trials' values there; nullopt: go on.
// Pure (what the tests check); the decision's detail names the dominating trials, their values,
// the margins used and the measured seed spread.
std::optional<store::Decision> judge(const PruningRule& rule, const std::vector<store::Objective>& objectives,
                                     const JudgedAt& at, const EpochValues& me, const std::vector<EpochValues>& others);

// The same for a trial of a study in `db` that has just recorded `at`: the values are read from
// every trial's recorded whole epochs, or its checks at that step. A trial resumed after a
// pruning is never judged.
std::optional<store::Decision> judge_trial(store::ResultsDb& db, const PruningRule& rule,
                                           const std::vector<store::Objective>& objectives,
                                           const store::Trial& trial, const JudgedAt& at);

}  // namespace comera::sweep
