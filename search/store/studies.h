#pragma once
// Studies: named groups of trials sharing a spec and a list of objectives.
#include "search/store/results_db.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace comera::store {

// Plain `comera train` runs are trials of this one study: every run appends a trial (a repeat of
// a config gets the next replica number), so runs are listed, merged and queried like sweeps.
inline const char* const kRunsStudy = "runs";
inline const char* const kDefaultObjectives = "eval_loss:min,size:min";

struct Objective {
  std::string name;
  bool minimize = true;
};

struct Study {
  int64_t id = 0;
  std::string name;
  nlohmann::json spec;
  std::string objectives;  // "eval_loss:min,size:min"
  std::string created_at;
};

// Parses "name:min,name:max"; throws comera::Error naming the bad entry.
std::vector<Objective> parse_objectives(const std::string& text);

// Returns the study of this name, creating it when missing. An existing study keeps its spec and
// objectives; asking for different objectives throws (they decide what "best" means).
Study create_or_get_study(ResultsDb& db, const std::string& name, const nlohmann::json& spec,
                          const std::string& objectives = kDefaultObjectives);

// Gives an existing study other objectives while none of its trials is complete or running (so
// a study made with a misspelt objective, whose trials all failed at their end, is not stuck
// with it); false, changing nothing, otherwise.
bool replace_objectives(ResultsDb& db, const std::string& name, const std::string& objectives);

std::optional<Study> find_study(ResultsDb& db, const std::string& name);
// The study named `name`; else throws comera::Error naming the database and the studies it has.
Study require_study(ResultsDb& db, const std::string& name);
std::vector<Study> list_studies(ResultsDb& db);

}  // namespace comera::store
