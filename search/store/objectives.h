#pragma once
// Final objective values of a trial (eval_loss, size, ...). NaN and +-inf are kept exactly
// (see stored_real.h): a diverged run's loss is NaN, not a missing value.
#include <SQLiteCpp/Database.h>

#include <map>
#include <string>

namespace comera::store {

using ObjectiveValues = std::map<std::string, double>;

// Inserts or replaces the values; the caller holds the write transaction (see ResultsDb::write).
void write_objectives(SQLite::Database& db, int64_t trial_id, const ObjectiveValues& values);
ObjectiveValues read_objectives(SQLite::Database& db, int64_t trial_id);

}  // namespace comera::store
