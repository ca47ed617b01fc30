#include "search/store/checks.h"

#include "search/store/stored_real.h"

#include <SQLiteCpp/Column.h>
#include <SQLiteCpp/Statement.h>

namespace comera::store {

void write_check(SQLite::Database& db, int64_t trial_id, const CheckRecord& record) {
  SQLite::Statement drop(db, "DELETE FROM checks WHERE trial_id = ? AND step = ?");
  drop.bind(1, trial_id);
  drop.bind(2, record.step);
  drop.exec();
  SQLite::Statement insert(db, "INSERT INTO checks (trial_id, step, epoch, name, value, kind) VALUES (?, ?, ?, ?, ?, ?)");
  for (const auto& [name, value] : record.metrics) {
    insert.bind(1, trial_id);
    insert.bind(2, record.step);
    insert.bind(3, record.epoch);
    insert.bind(4, name);
    bind_real(insert, 5, 6, value);
    insert.exec();
    insert.reset();
  }
}

void record_check(ResultsDb& db, int64_t trial_id, const CheckRecord& record) {
  db.write([&] { write_check(db.sql(), trial_id, record); });
}

std::vector<CheckRecord> read_checks(SQLite::Database& db, int64_t trial_id, std::optional<int64_t> step) {
  std::vector<CheckRecord> out;
  SQLite::Statement rows(db, "SELECT step, epoch, name, value, kind FROM checks WHERE trial_id = ?1 AND "
                             "(?2 IS NULL OR step = ?2) ORDER BY step, name");
  rows.bind(1, trial_id);
  if (step) rows.bind(2, *step);
  while (rows.executeStep()) {
    const int64_t step = rows.getColumn(0).getInt64();
    if (out.empty() || out.back().step != step) out.push_back({step, rows.getColumn(1).getInt64(), {}});
    out.back().metrics[rows.getColumn(2).getString()] = read_real(rows, 3, 4);
  }
  return out;
}

}  // namespace comera::store
