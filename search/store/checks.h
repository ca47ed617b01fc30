#pragma once
// A trial's evaluations inside its epochs (a pruning rule's "every_steps"): the same values an
// epoch records, at the optimiser step they were taken, so trials can be compared step by step.
#include "search/store/results_db.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace comera::store {

struct CheckRecord {
  int64_t step = 0;   // optimiser steps so far
  int64_t epoch = 0;  // the epoch it fell in (0-based)
  std::map<std::string, double> metrics;  // NaN and +-inf are kept
};

// Records (or replaces) one check, in a transaction of its own.
void record_check(ResultsDb& db, int64_t trial_id, const CheckRecord& record);
// The same without a transaction, for callers that hold the write transaction.
void write_check(SQLite::Database& db, int64_t trial_id, const CheckRecord& record);
// In step order; only the one at `step` when given.
std::vector<CheckRecord> read_checks(SQLite::Database& db, int64_t trial_id, std::optional<int64_t> step = std::nullopt);

}  // namespace comera::store
