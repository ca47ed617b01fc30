#pragma once
// Why the search did what it did to a trial, one row per decision: proposed (what an adaptive
// sampler expected it to fill), pruned (at which epoch, by whom it was dominated, with what
// margins), resumed (a pruned trial run on by request, never pruned again).
#include "search/store/results_db.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace comera::store {

enum class DecisionKind { Proposed, Pruned, Resumed };

std::string to_string(DecisionKind kind);

struct Decision {
  DecisionKind kind = DecisionKind::Proposed;
  std::optional<int64_t> epoch;  // the epoch a pruning judged
  nlohmann::json detail = nlohmann::json::object();  // "reason" (one line) and the figures behind it
  std::string recorded_at;       // set by the database when empty
};

// Appends one decision (caller holds the write transaction).
void write_decision(SQLite::Database& db, int64_t trial_id, const Decision& decision);
// The same in a transaction of its own.
void record_decision(ResultsDb& db, int64_t trial_id, const Decision& decision);
// In the order they were taken.
std::vector<Decision> read_decisions(SQLite::Database& db, int64_t trial_id);

// "pruned at epoch 2: ..." from a decision's kind, epoch and detail.reason.
std::string describe(const Decision& decision);
nlohmann::json to_json(const Decision& decision);

}  // namespace comera::store
