#pragma once
// Trials: one configuration of a study, its life-cycle state, and where it ran.
#include "search/environment.h"
#include "search/store/results_db.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace comera::store {

// Pruned: stopped at an epoch end because other trials dominated it there (decisions.h says by
// whom); its epochs so far and its checkpoint are kept, so it can be resumed on request.
enum class TrialState { Queued, Running, Complete, Failed, Diverged, Killed, Pruned };

std::string to_string(TrialState state);
// Throws comera::Error for a word that is not a state.
TrialState parse_trial_state(const std::string& text);

struct Trial {
  int64_t id = 0;
  std::string uid;
  int64_t study_id = 0;
  std::string study;
  int64_t number = 0;
  int64_t replica = 0;
  nlohmann::json config;  // canonical
  std::string config_hash;
  std::optional<int64_t> seed;  // config["seed"] when it is an integer
  TrialState state = TrialState::Queued;
  int64_t attempts = 0;
  std::string created_at, started_at, ended_at, heartbeat_at;  // "" when not yet
  std::string error;
  std::string worker;
  std::optional<Environment> environment;  // set once the trial has been claimed
};

// All fields; the environment as an object or null.
nlohmann::json to_json(const Trial& trial);

std::optional<Trial> load_trial(ResultsDb& db, int64_t id);
// All trials of the study (every study when empty), by study then number.
std::vector<Trial> list_trials(ResultsDb& db, const std::string& study = "");

}  // namespace comera::store
