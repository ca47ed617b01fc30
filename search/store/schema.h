#pragma once
// The versioned schema: an ordered list of migration steps. A new database runs them all; an old
// one is brought forward by `comera db upgrade`, each step in its own transaction.
#include <SQLiteCpp/Database.h>

#include <functional>
#include <string>
#include <vector>

namespace comera::store {

struct Migration {
  int to_version;           // 1, 2, ...: the version the database has after this step
  std::string description;  // recorded in the schema_version table
  std::function<void(SQLite::Database&)> apply;
};

// The steps of this build, in order; the last one's to_version is the current schema version.
const std::vector<Migration>& migrations();
int latest_schema_version();

// The data tables of every schema version (schema_version aside): a comera database made before
// comera set SQLite's application_id is recognised by having all of them.
const std::vector<std::string>& results_tables();

// Version recorded in the schema_version table; 0 when the table does not exist.
int schema_version(SQLite::Database& db);

// Applies the steps above the database's version, each inside BEGIN IMMEDIATE ... COMMIT (the
// version is re-read inside, so concurrent creators do not apply a step twice). Returns how
// many steps ran.
int migrate(SQLite::Database& db, const std::vector<Migration>& steps);

}  // namespace comera::store
