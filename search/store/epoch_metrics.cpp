#include "search/store/epoch_metrics.h"

#include "search/store/sql_now.h"
#include "search/store/stored_real.h"

#include <SQLiteCpp/Column.h>
#include <SQLiteCpp/Statement.h>

#include <algorithm>

namespace comera::store {

const char* const kEpochCoverage =
    "CASE WHEN e.shared_from IS NOT NULL THEN 0 ELSE COALESCE((SELECT f.value FROM epoch_metrics f WHERE f.trial_id = e.trial_id AND f.epoch = e.epoch "
    "AND f.name = 'epoch_fraction'), 1) END";

const char* const kTrialSeconds =
    "(COALESCE((SELECT MAX(m.value) FROM epoch_metrics m WHERE m.trial_id = t.id AND m.name = 'elapsed_s'), 0) - "
    "COALESCE((SELECT MAX(m.value) FROM epoch_metrics m JOIN epochs s ON s.trial_id = m.trial_id AND "
    "s.epoch = m.epoch WHERE m.trial_id = t.id AND m.name = 'elapsed_s' AND s.shared_from IS NOT NULL), 0))";

void write_epoch(SQLite::Database& db, int64_t trial_id, const EpochRecord& record) {
  SQLite::Statement drop(db, "DELETE FROM epochs WHERE trial_id = ? AND epoch = ?");
  drop.bind(1, trial_id);
  drop.bind(2, record.epoch);
  drop.exec();
  SQLite::Statement insert(db,
                           "INSERT INTO epochs (trial_id, epoch, step, stage, recorded_at, shared_from) "
                           "VALUES (?, ?, ?, ?, COALESCE(NULLIF(?, ''), " COMERA_SQL_NOW "), NULLIF(?, ''))");
  insert.bind(1, trial_id);
  insert.bind(2, record.epoch);
  insert.bind(3, record.step);
  insert.bind(4, record.stage);
  insert.bind(5, record.recorded_at);
  insert.bind(6, record.shared_from);
  insert.exec();
  SQLite::Statement metric(
      db, "INSERT INTO epoch_metrics (trial_id, epoch, name, value, kind) VALUES (?, ?, ?, ?, ?)");
  for (const auto& [name, value] : record.metrics) {
    metric.bind(1, trial_id);
    metric.bind(2, record.epoch);
    metric.bind(3, name);
    bind_real(metric, 4, 5, value);
    metric.exec();
    metric.reset();
  }
}

void record_epoch(ResultsDb& db, int64_t trial_id, const EpochRecord& record) {
  db.write([&] {
    write_epoch(db.sql(), trial_id, record);
    SQLite::Statement beat(db.sql(), "UPDATE trials SET heartbeat_at = " COMERA_SQL_NOW
                                     " WHERE id = ? AND state = 'running'");
    beat.bind(1, trial_id);
    beat.exec();
  });
}

std::vector<EpochRecord> read_epochs(SQLite::Database& db, int64_t trial_id) {
  std::vector<EpochRecord> out;
  SQLite::Statement epochs(
      db, "SELECT epoch, step, stage, recorded_at, COALESCE(shared_from, '') FROM epochs WHERE trial_id = ? "
          "ORDER BY epoch");
  epochs.bind(1, trial_id);
  while (epochs.executeStep())
    out.push_back({epochs.getColumn(0).getInt64(),
                   epochs.getColumn(1).getInt64(),
                   epochs.getColumn(2).getString(),
                   {},
                   epochs.getColumn(3).getString(),
                   epochs.getColumn(4).getString()});
  SQLite::Statement metrics(
      db, "SELECT epoch, name, value, kind FROM epoch_metrics WHERE trial_id = ? ORDER BY epoch");
  metrics.bind(1, trial_id);
  auto it = out.begin();
  while (metrics.executeStep()) {
    const int64_t epoch = metrics.getColumn(0).getInt64();
    while (it != out.end() && it->epoch < epoch) ++it;
    if (it != out.end() && it->epoch == epoch)
      it->metrics[metrics.getColumn(1).getString()] = read_real(metrics, 2, 3);
  }
  return out;
}

std::vector<std::string> ordered_metric_names(SQLite::Database& db,
                                              const std::set<std::string>& names) {
  std::vector<std::string> out;
  SQLite::Statement view(db, "SELECT name FROM pragma_table_info('epoch_table') ORDER BY cid");
  while (view.executeStep())
    if (names.count(view.getColumn(0).getString())) out.push_back(view.getColumn(0).getString());
  for (const auto& name : names)
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  return out;
}

}  // namespace comera::store
