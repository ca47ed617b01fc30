#include "search/store/schema.h"

#include "core/util/error.h"
#include "search/store/canonical_json.h"
#include "search/store/sql_now.h"

#include <SQLiteCpp/Column.h>
#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>
#include <nlohmann/json.hpp>

namespace comera::store {

namespace {

// Times are ISO-8601 UTC text with milliseconds (sorts and compares as text), from SQLite's clock.
const char* kSchemaV1 = R"sql(
CREATE TABLE studies (
  id          INTEGER PRIMARY KEY,
  name        TEXT NOT NULL UNIQUE,
  spec        TEXT NOT NULL DEFAULT '{}',   -- JSON
  objectives  TEXT NOT NULL,                -- "eval_loss:min,size:min"
  created_at  TEXT NOT NULL
);
CREATE TABLE trials (
  id            INTEGER PRIMARY KEY,
  uid           TEXT NOT NULL UNIQUE,       -- random; identifies the trial across merged files
  study_id      INTEGER NOT NULL REFERENCES studies(id) ON DELETE CASCADE,
  number        INTEGER NOT NULL,           -- 1, 2, ... within the study
  replica       INTEGER NOT NULL DEFAULT 0, -- repeats of one config (the 'runs' study only)
  config        TEXT NOT NULL,              -- canonical JSON
  config_hash   TEXT NOT NULL,              -- SHA-256 of config
  seed          INTEGER,
  state         TEXT NOT NULL DEFAULT 'queued'
                CHECK (state IN ('queued','running','complete','failed','diverged','killed')),
  attempts      INTEGER NOT NULL DEFAULT 0, -- how many times it was claimed
  created_at    TEXT NOT NULL,
  started_at    TEXT,
  ended_at      TEXT,
  heartbeat_at  TEXT,
  error         TEXT,
  worker        TEXT,                       -- host:pid of the process running it
  git_commit    TEXT,
  git_dirty     INTEGER,
  torch_version TEXT,
  device        TEXT,
  threads       INTEGER,
  host          TEXT,
  UNIQUE (study_id, config_hash, replica),
  UNIQUE (study_id, number)
);
CREATE INDEX trials_by_state ON trials(study_id, state, number);
CREATE TABLE epochs (
  trial_id    INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
  epoch       INTEGER NOT NULL,
  step        INTEGER NOT NULL,
  stage       TEXT NOT NULL,                -- 'early', 'late', ...
  recorded_at TEXT NOT NULL,
  PRIMARY KEY (trial_id, epoch)
);
-- One row per (trial, epoch, metric): NaN and +-inf survive (value NULL for NaN, kind says which).
CREATE TABLE epoch_metrics (
  trial_id INTEGER NOT NULL,
  epoch    INTEGER NOT NULL,
  name     TEXT NOT NULL,
  value    REAL,
  kind     TEXT NOT NULL CHECK (kind IN ('finite','nan','inf','-inf')),
  PRIMARY KEY (trial_id, epoch, name),
  FOREIGN KEY (trial_id, epoch) REFERENCES epochs(trial_id, epoch) ON DELETE CASCADE
);
CREATE TABLE objectives (
  trial_id INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
  name     TEXT NOT NULL,
  value    REAL,
  kind     TEXT NOT NULL CHECK (kind IN ('finite','nan','inf','-inf')),
  PRIMARY KEY (trial_id, name)
);
CREATE TABLE layer_ranks (
  trial_id INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
  epoch    INTEGER NOT NULL,
  layer    TEXT NOT NULL,
  ranks    TEXT NOT NULL,                   -- "1,12,30,30,30,12,1"
  size     INTEGER NOT NULL,                -- exact parameter count at these ranks
  PRIMARY KEY (trial_id, epoch, layer)
);
CREATE TABLE kernel_choices (
  id            INTEGER PRIMARY KEY,
  layer_modes   TEXT NOT NULL,              -- "12,8,8|8,8,12"
  ranks         TEXT NOT NULL,
  token_bucket  INTEGER NOT NULL,
  dtype         TEXT NOT NULL,
  device        TEXT NOT NULL,
  threads       INTEGER NOT NULL,
  torch_version TEXT NOT NULL,
  fingerprint   TEXT NOT NULL,              -- Environment::fingerprint() of the measuring process
  choice        TEXT NOT NULL,              -- the chosen contraction order (JSON)
  median_ms     REAL NOT NULL,
  repeats       INTEGER NOT NULL,
  git_commit    TEXT,
  created_at    TEXT NOT NULL,
  UNIQUE (layer_modes, ranks, token_bucket, dtype, device, threads, torch_version, fingerprint)
);
-- The standard per-epoch metrics as columns (NaN shows as NULL here; epoch_metrics.kind has it).
CREATE VIEW epoch_table AS
SELECT e.trial_id, e.epoch, e.step, e.stage,
  MAX(CASE WHEN m.name = 'train_loss'   THEN m.value END) AS train_loss,
  MAX(CASE WHEN m.name = 'eval_loss'    THEN m.value END) AS eval_loss,
  MAX(CASE WHEN m.name = 'accuracy'     THEN m.value END) AS accuracy,
  MAX(CASE WHEN m.name = 'size'         THEN m.value END) AS size,
  MAX(CASE WHEN m.name = 'surrogate'    THEN m.value END) AS surrogate,
  MAX(CASE WHEN m.name = 'compression'  THEN m.value END) AS compression,
  MAX(CASE WHEN m.name = 'step_time_ms' THEN m.value END) AS step_time_ms,
  MAX(CASE WHEN m.name = 'tokens_per_s' THEN m.value END) AS tokens_per_s,
  MAX(CASE WHEN m.name = 'peak_mem_mb'  THEN m.value END) AS peak_mem_mb
FROM epochs e LEFT JOIN epoch_metrics m ON m.trial_id = e.trial_id AND m.epoch = e.epoch
GROUP BY e.trial_id, e.epoch;
-- One row per trial with its study's name: the usual starting point of a query.
CREATE VIEW trial_table AS
SELECT t.id AS trial_id, s.name AS study, t.number, t.replica, t.state, t.seed, t.config,
  t.config_hash, t.attempts, t.started_at, t.ended_at, t.error, t.worker, t.git_commit,
  t.git_dirty, t.torch_version, t.device, t.threads, t.host
FROM trials t JOIN studies s ON s.id = t.study_id;
)sql";

// `comera train` runs stored their config as the experiment with "seed" added; every trial now
// stores {"kind", "point", "seed", "experiment"} (search/runs/trial_config.h). "kind" is left
// out here (it needs the model kind); trial_outcome() names such a trial from its epochs.
void train_configs_in_trial_shape(SQLite::Database& db) {
  SQLite::Statement rows(db, "SELECT t.id, t.config FROM trials t JOIN studies s ON s.id = t.study_id "
                             "WHERE s.name = 'runs'");
  SQLite::Statement update(db, "UPDATE trials SET config = ?, config_hash = ? WHERE id = ?");
  while (rows.executeStep()) {
    auto config = nlohmann::json::parse(rows.getColumn(1).getString(), nullptr, false);
    if (!config.is_object() || config.contains("experiment")) continue;
    nlohmann::json shaped = {{"point", nlohmann::json::object()}, {"seed", config.value("seed", nlohmann::json())}};
    config.erase("seed");
    shaped["experiment"] = config;
    update.bind(1, canonical_json(shaped));
    update.bind(2, config_hash(shaped));
    update.bind(3, rows.getColumn(0).getInt64());
    update.exec();
    update.reset();
  }
}

const char* kDecisions = R"sql(
CREATE TABLE decisions (
  id          INTEGER PRIMARY KEY,
  trial_id    INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
  kind        TEXT NOT NULL CHECK (kind IN ('proposed','pruned','resumed')),
  epoch       INTEGER,                    -- the epoch a pruning judged
  detail      TEXT NOT NULL,              -- JSON: "reason" and the figures behind it
  recorded_at TEXT NOT NULL
);
CREATE INDEX decisions_by_trial ON decisions(trial_id, id);
)sql";

// SQLite cannot alter a CHECK constraint, and rebuilding `trials` would cascade-delete every
// epoch (foreign keys are on, and cannot be switched off inside this step's transaction).
// Allowing one more state only loosens the constraint, which SQLite's documentation permits by
// editing the stored CREATE TABLE under writable_schema (ALTER TABLE, section "Making other
// kinds of table schema changes"); no stored row changes.
void pruned_state_and_decisions(SQLite::Database& db) {
  const std::string states = "'diverged','killed')";
  std::string sql = db.execAndGet("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'trials'").getString();
  const auto at = sql.find(states);
  if (at == std::string::npos || sql.find(states, at + 1) != std::string::npos)
    throw Error("the trials table of this database is not the one comera made (its state CHECK "
                "constraint is not as expected): migrate a copy made by comera, or export and re-import");
  sql.replace(at, states.size(), "'diverged','killed','pruned')");
  const int version = db.execAndGet("PRAGMA schema_version").getInt();
  db.exec("PRAGMA writable_schema = ON");
  SQLite::Statement edit(db, "UPDATE sqlite_master SET sql = ? WHERE type = 'table' AND name = 'trials'");
  edit.bind(1, sql);
  edit.exec();
  db.exec("PRAGMA schema_version = " + std::to_string(version + 1));
  db.exec("PRAGMA writable_schema = OFF");
  const std::string check = db.execAndGet("PRAGMA quick_check(1)").getString();
  if (check != "ok") throw Error("the schema edit left the database inconsistent (" + check + "): nothing was changed");
  db.exec(kDecisions);
}

const char* kChecks = R"sql(
CREATE TABLE checks (
  trial_id INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
  step     INTEGER NOT NULL,
  epoch    INTEGER NOT NULL,
  name     TEXT NOT NULL,
  value    REAL,
  kind     TEXT NOT NULL CHECK (kind IN ('finite','nan','inf','-inf')),
  PRIMARY KEY (trial_id, step, name)
);
)sql";

void ensure_version_table(SQLite::Database& db) {
  db.exec(
      "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, "
      "description TEXT NOT NULL, applied_at TEXT NOT NULL)");
}

}  // namespace

const std::vector<Migration>& migrations() {
  static const std::vector<Migration> steps = {
      {1, "studies, trials, epoch metrics, objectives, layer ranks, kernel choices",
       [](SQLite::Database& db) { db.exec(kSchemaV1); }},
      {2, "trial configs of train runs in the shape of every trial: kind, point, seed, experiment",
       train_configs_in_trial_shape},
      {3, "trial state 'pruned'; decisions (why a trial was proposed, pruned or resumed)",
       pruned_state_and_decisions},
      {4, "checks (evaluations inside epochs, for pruning every N steps)",
       [](SQLite::Database& db) { db.exec(kChecks); }},
      {5, "epochs.shared_from (an early stage computed once and shared by trials that differ only after it)",
       [](SQLite::Database& db) { db.exec("ALTER TABLE epochs ADD COLUMN shared_from TEXT"); }},
  };
  return steps;
}

int latest_schema_version() { return migrations().back().to_version; }

const std::vector<std::string>& results_tables() {
  static const std::vector<std::string> tables = {
      "studies", "trials", "epochs", "epoch_metrics", "objectives", "layer_ranks", "kernel_choices"};
  return tables;
}

int schema_version(SQLite::Database& db) {
  if (!db.tableExists("schema_version")) return 0;
  return db.execAndGet("SELECT COALESCE(MAX(version), 0) FROM schema_version").getInt();
}

int migrate(SQLite::Database& db, const std::vector<Migration>& steps) {
  int applied = 0;
  for (const auto& step : steps) {
    SQLite::Transaction tx(db, SQLite::TransactionBehavior::IMMEDIATE);
    if (schema_version(db) >= step.to_version) continue;
    ensure_version_table(db);
    step.apply(db);
    SQLite::Statement record(db,
                             "INSERT INTO schema_version (version, description, applied_at) "
                             "VALUES (?, ?, " COMERA_SQL_NOW ")");
    record.bind(1, step.to_version);
    record.bind(2, step.description);
    record.exec();
    tx.commit();
    ++applied;
  }
  return applied;
}

}  // namespace comera::store
