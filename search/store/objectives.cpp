#include "search/store/objectives.h"

#include "search/store/stored_real.h"

#include <SQLiteCpp/Column.h>
#include <SQLiteCpp/Statement.h>

namespace comera::store {

void write_objectives(SQLite::Database& db, int64_t trial_id, const ObjectiveValues& values) {
  SQLite::Statement insert(
      db, "INSERT OR REPLACE INTO objectives (trial_id, name, value, kind) VALUES (?, ?, ?, ?)");
  for (const auto& [name, value] : values) {
    insert.bind(1, trial_id);
    insert.bind(2, name);
    bind_real(insert, 3, 4, value);
    insert.exec();
    insert.reset();
  }
}

ObjectiveValues read_objectives(SQLite::Database& db, int64_t trial_id) {
  SQLite::Statement select(db, "SELECT name, value, kind FROM objectives WHERE trial_id = ?");
  select.bind(1, trial_id);
  ObjectiveValues out;
  while (select.executeStep()) out[select.getColumn(0).getString()] = read_real(select, 1, 2);
  return out;
}

}  // namespace comera::store
