#include "search/store/trial_queue.h"

#include "core/util/error.h"
#include "search/store/canonical_json.h"
#include "search/store/sql_now.h"

#include <SQLiteCpp/Column.h>
#include <SQLiteCpp/Statement.h>

#include <array>
#include <cstdio>
#include <functional>
#include <random>

namespace comera::store {

namespace {

std::string random_uid() {
  std::random_device device;
  std::string out;
  for (int i = 0; i < 4; ++i) {
    std::array<char, 9> word{};
    std::snprintf(word.data(), word.size(), "%08x", static_cast<unsigned>(device()));
    out += word.data();
  }
  return out;
}

std::optional<int64_t> seed_of(const nlohmann::json& config) {
  if (config.is_object() && config.contains("seed") && config["seed"].is_number_integer())
    return config["seed"].get<int64_t>();
  return std::nullopt;
}

// Inserts a trial row (caller holds the write transaction); returns its id.
int64_t insert_trial(SQLite::Database& db, int64_t study_id, const nlohmann::json& config,
                     int64_t replica, TrialState state) {
  SQLite::Statement insert(
      db,
      "INSERT INTO trials (uid, study_id, number, replica, config, config_hash, seed, state, "
      "created_at) VALUES (?, ?, (SELECT COALESCE(MAX(number), 0) + 1 FROM trials WHERE "
      "study_id = ?), ?, ?, ?, ?, ?, " COMERA_SQL_NOW ")");
  insert.bind(1, random_uid());
  insert.bind(2, study_id);
  insert.bind(3, study_id);
  insert.bind(4, replica);
  insert.bind(5, canonical_json(config));
  insert.bind(6, config_hash(config));
  if (auto seed = seed_of(config)) insert.bind(7, *seed);
  insert.bind(8, to_string(state));
  insert.exec();
  return db.getLastInsertRowid();
}

// Marks a trial running under this worker (caller holds the write transaction).
void mark_running(SQLite::Database& db, int64_t trial_id, const std::string& worker,
                  const Environment& env) {
  SQLite::Statement update(
      db,
      "UPDATE trials SET state = 'running', attempts = attempts + 1, started_at = " COMERA_SQL_NOW
      ", heartbeat_at = " COMERA_SQL_NOW
      ", ended_at = NULL, error = NULL, worker = ?, "
      "git_commit = ?, git_dirty = ?, torch_version = ?, device = ?, threads = ?, host = ? "
      "WHERE id = ?");
  update.bind(1, worker);
  update.bind(2, env.git_commit);
  update.bind(3, env.git_dirty ? 1 : 0);
  update.bind(4, env.torch_version);
  update.bind(5, env.device);
  update.bind(6, env.threads);
  update.bind(7, env.host);
  update.bind(8, trial_id);
  update.exec();
}

// The lowest-numbered queued trial of the study (among `ids` when given), marked running.
std::optional<Trial> claim_next(ResultsDb& db, int64_t study_id, const std::vector<int64_t>* ids,
                                const std::string& worker, const Environment& env) {
  std::string among;
  if (ids) {
    if (ids->empty()) return std::nullopt;
    for (int64_t id : *ids) among += (among.empty() ? "" : ",") + std::to_string(id);
    among = " AND id IN (" + among + ")";
  }
  const auto id = db.write([&]() -> std::optional<int64_t> {
    SQLite::Statement next(db.sql(), "SELECT id FROM trials WHERE study_id = ? AND state = "
                                     "'queued'" + among + " ORDER BY number LIMIT 1");
    next.bind(1, study_id);
    if (!next.executeStep()) return std::nullopt;
    const int64_t trial_id = next.getColumn(0).getInt64();
    mark_running(db.sql(), trial_id, worker, env);
    return trial_id;
  });
  if (!id) return std::nullopt;
  return load_trial(db, *id);
}

// Back to the queue: drops the partial results of the trials matched by `where` (over trials,
// parameters bound by `bind`) and clears their run columns; caller holds the write transaction.
int requeue_where(SQLite::Database& db, const std::string& where,
                  const std::function<void(SQLite::Statement&)>& bind, bool drop_results = true) {
  for (const char* table : {"epochs", "checks", "layer_ranks", "objectives"}) {
    if (!drop_results) break;
    SQLite::Statement drop(db, std::string("DELETE FROM ") + table +
                                   " WHERE trial_id IN (SELECT id FROM trials WHERE " + where + ")");
    bind(drop);
    drop.exec();
  }
  SQLite::Statement update(
      db, "UPDATE trials SET state = 'queued', started_at = NULL, ended_at = NULL, "
          "heartbeat_at = NULL, error = NULL, worker = NULL, git_commit = NULL, "
          "git_dirty = NULL, torch_version = NULL, device = NULL, threads = NULL, "
          "host = NULL WHERE " + where);
  bind(update);
  return update.exec();
}

}  // namespace

std::vector<int64_t> enqueue_trials(ResultsDb& db, const Study& study,
                                    const std::vector<nlohmann::json>& configs) {
  return db.write([&] {
    std::vector<int64_t> ids;
    SQLite::Statement find(db.sql(),
                           "SELECT id FROM trials WHERE study_id = ? AND config_hash = ? AND "
                           "replica = 0");
    for (const auto& config : configs) {
      find.bind(1, study.id);
      find.bind(2, config_hash(config));
      ids.push_back(find.executeStep()
                        ? find.getColumn(0).getInt64()
                        : insert_trial(db.sql(), study.id, config, 0, TrialState::Queued));
      find.reset();
    }
    return ids;
  });
}

std::optional<Trial> claim_next_trial(ResultsDb& db, int64_t study_id, const std::string& worker,
                                      const Environment& env) {
  return claim_next(db, study_id, nullptr, worker, env);
}

std::optional<Trial> claim_next_trial_among(ResultsDb& db, int64_t study_id,
                                            const std::vector<int64_t>& ids,
                                            const std::string& worker, const Environment& env) {
  return claim_next(db, study_id, &ids, worker, env);
}

Trial start_run(ResultsDb& db, const nlohmann::json& config, const std::string& worker,
                const Environment& env) {
  const Study runs = create_or_get_study(db, kRunsStudy, nlohmann::json::object());
  const int64_t id = db.write([&] {
    SQLite::Statement replica(db.sql(),
                              "SELECT COALESCE(MAX(replica) + 1, 0) FROM trials WHERE "
                              "study_id = ? AND config_hash = ?");
    replica.bind(1, runs.id);
    replica.bind(2, config_hash(config));
    replica.executeStep();
    const int64_t trial_id = insert_trial(db.sql(), runs.id, config,
                                          replica.getColumn(0).getInt64(), TrialState::Queued);
    mark_running(db.sql(), trial_id, worker, env);
    return trial_id;
  });
  return *load_trial(db, id);
}

bool resume_trial(ResultsDb& db, int64_t trial_id, const std::string& worker) {
  return db.write([&] {
    SQLite::Statement update(db.sql(), "UPDATE trials SET state = 'running', ended_at = NULL, "
                                       "error = NULL, attempts = attempts + 1, heartbeat_at = " COMERA_SQL_NOW
                                       " WHERE id = ? AND worker = ? AND state IN ('failed', 'killed', 'running')");
    update.bind(1, trial_id);
    update.bind(2, worker);
    return update.exec() == 1;
  });
}

bool heartbeat(ResultsDb& db, int64_t trial_id, const std::string& worker) {
  return db.write([&] {
    SQLite::Statement beat(db.sql(), "UPDATE trials SET heartbeat_at = " COMERA_SQL_NOW
                                     " WHERE id = ? AND worker = ? AND state = 'running'");
    beat.bind(1, trial_id);
    beat.bind(2, worker);
    return beat.exec() == 1;
  });
}

void require_held(ResultsDb& db, int64_t trial_id, const std::string& worker) {
  // Checked before every record, so only the three columns it judges by.
  SQLite::Statement q(db.sql(), "SELECT number, state, worker FROM trials WHERE id = ?");
  q.bind(1, trial_id);
  if (!q.executeStep()) throw Error("no trial " + std::to_string(trial_id) + " in " + db.path());
  const auto number = q.getColumn(0).getInt64();
  const std::string state = q.getColumn(1).getString(), holder = q.getColumn(2).getString();
  if (holder != worker || state != to_string(TrialState::Running))
    throw LostClaim("trial " + std::to_string(number) + " in " + db.path() + " is " + state + " under worker '" +
                    holder + "', no longer held by worker '" + worker +
                    "' (declared stale and claimed again?): this run records nothing more into it");
}

void finish_trial(ResultsDb& db, int64_t trial_id, const std::string& worker, TrialState state,
                  const ObjectiveValues& objectives, const std::string& error) {
  if (state == TrialState::Queued || state == TrialState::Running)
    throw Error("finish_trial needs an end state (complete, failed, diverged, killed, pruned), not " +
                to_string(state));
  db.write([&] {
    const auto trial = load_trial(db, trial_id);
    if (!trial) throw Error("no trial " + std::to_string(trial_id) + " in " + db.path());
    const bool owned = trial->worker == worker &&
                       (trial->state == TrialState::Running || trial->state == TrialState::Failed);
    if (!owned)
      throw Error("trial " + std::to_string(trial_id) + " in " + db.path() + " is " +
                  to_string(trial->state) + " under worker '" + trial->worker + "', so worker '" +
                  worker + "' cannot finish it (it was declared stale and re-queued?)");
    if (state == TrialState::Complete) {
      SQLite::Statement study(db.sql(), "SELECT objectives FROM studies WHERE id = ?");
      study.bind(1, trial->study_id);
      study.executeStep();
      for (const auto& objective : parse_objectives(study.getColumn(0).getString()))
        if (!objectives.count(objective.name))
          throw Error("trial " + std::to_string(trial_id) + " of study '" + trial->study +
                      "' completed without objective '" + objective.name +
                      "': report every objective of the study");
    }
    write_objectives(db.sql(), trial_id, objectives);
    SQLite::Statement update(db.sql(),
                             "UPDATE trials SET state = ?, error = NULLIF(?, ''), "
                             "ended_at = " COMERA_SQL_NOW " WHERE id = ?");
    update.bind(1, to_string(state));
    update.bind(2, error);
    update.bind(3, trial_id);
    update.exec();
  });
}

int mark_stale_trials(ResultsDb& db, double max_age_s,
                      const std::function<bool(const std::string& worker)>& by_heartbeat) {
  return db.write([&] {
    SQLite::Statement silent(
        db.sql(),
        "SELECT id, COALESCE(worker, '') FROM trials WHERE state = 'running' AND heartbeat_at < "
        "strftime('%Y-%m-%dT%H:%M:%fZ', 'now', printf('-%f seconds', ?))");
    silent.bind(1, max_age_s);
    std::vector<int64_t> stale;
    while (silent.executeStep())
      if (by_heartbeat(silent.getColumn(1).getString())) stale.push_back(silent.getColumn(0).getInt64());
    SQLite::Statement fail(
        db.sql(),
        "UPDATE trials SET state = 'failed', ended_at = " COMERA_SQL_NOW
        ", error = printf('no heartbeat for more than %g s from worker %s (presumed dead)', ?, "
        "worker) WHERE id = ?");
    for (int64_t id : stale) {
      fail.bind(1, max_age_s);
      fail.bind(2, id);
      fail.exec();
      fail.reset();
    }
    return static_cast<int>(stale.size());
  });
}

int requeue_failed(ResultsDb& db, int64_t study_id) {
  return db.write([&] {
    return requeue_where(db.sql(), "study_id = ? AND state = 'failed'",
                         [&](SQLite::Statement& s) { s.bind(1, study_id); });
  });
}

bool requeue_trial(ResultsDb& db, int64_t trial_id, TrialState state, const std::string& worker) {
  return db.write([&] {
    return requeue_where(
               db.sql(), "id = ? AND state = ? AND worker = ?",
               [&](SQLite::Statement& s) {
                 s.bind(1, trial_id);
                 s.bind(2, to_string(state));
                 s.bind(3, worker);
               },
               /*drop_results=*/false) == 1;
  });
}

}  // namespace comera::store
