#pragma once
// Ad-hoc SQL on a read-only connection (`comera query`).
#include "search/store/flat_table.h"
#include "search/store/results_db.h"

#include <string>

namespace comera::store {

// Runs one statement that only reads (SELECT, read-only PRAGMA, WITH ... SELECT) on a database
// opened with Mode::ReadOnly. A statement that would write, or more than one statement, throws
// comera::Error before anything runs.
FlatTable read_only_query(ResultsDb& db, const std::string& sql);

}  // namespace comera::store
