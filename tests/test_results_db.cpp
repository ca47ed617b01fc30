// The results database: schema and version checks, refusal of foreign files without touching
// them, NaN/inf storage, the trial queue under real concurrent processes, stale heartbeats,
// merging, read-only queries and the CLI. Checks read back through plain SQL where they can, so
// the store's own readers are not their own reference.
#include "core/util/error.h"
#include "search/store/canonical_json.h"
#include "search/store/checks.h"
#include "search/store/decisions.h"
#include "search/store/epoch_metrics.h"
#include "search/store/export_table.h"
#include "search/store/flat_table.h"
#include "search/store/kernel_choices.h"
#include "search/store/layer_ranks.h"
#include "search/store/merge.h"
#include "search/store/objectives.h"
#include "search/store/query.h"
#include "search/store/results_db.h"
#include "search/store/schema.h"
#include "search/store/studies.h"
#include "search/store/trial_outcome.h"
#include "search/store/trial_queue.h"
#include "search/store/trials.h"
#include "tests/support/catch.h"
#include "tests/support/cli_process.h"
#include "tests/support/read_only.h"
#include "tests/support/temp_dir.h"

#include <SQLiteCpp/Column.h>
#include <SQLiteCpp/Statement.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <tuple>
#include <iterator>
#include <limits>
#include <set>
#include <sstream>
#include <thread>

using namespace comera;
using namespace comera::store;
using Catch::Matchers::Contains;
using comera::testing::TempDir;
using nlohmann::json;

namespace {

using Mode = ResultsDb::Mode;

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// A plain SQLite connection, independent of ResultsDb, for setting up and checking.
int64_t sql_int(const std::string& path, const std::string& query) {
  SQLite::Database db(path, SQLite::OPEN_READONLY);
  return db.execAndGet(query).getInt64();
}

void sql_exec(const std::string& path, const std::string& statements) {
  SQLite::Database db(path, SQLite::OPEN_READWRITE);
  db.exec(statements);
}

void sql_exec_create(const std::string& path, const std::string& statements) {
  SQLite::Database db(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  db.exec(statements);
}

Environment test_environment(const std::string& device = "test-cpu") {
  Environment env;
  env.git_commit = "abc123";
  env.torch_version = "1.13.1";
  env.device = device;
  env.threads = 2;
  env.host = "testhost";
  return env;
}

std::vector<json> sweep_configs(int n) {
  std::vector<json> configs;
  for (int i = 0; i < n; ++i) configs.push_back({{"lr", 0.001 * (i + 1)}, {"seed", i}});
  return configs;
}

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

}  // namespace

TEST_CASE("a new database gets the current schema, WAL, foreign keys and a busy timeout",
          "[store]") {
  TempDir dir;
  const std::string path = dir.file("sub/results.db");
  {
    auto db = ResultsDb::open(path);
    CHECK(schema_version(db.sql()) == latest_schema_version());
    CHECK(db.sql().execAndGet("PRAGMA journal_mode").getString() == "wal");
    CHECK(db.sql().execAndGet("PRAGMA foreign_keys").getInt() == 1);
    CHECK(db.sql().execAndGet("PRAGMA busy_timeout").getInt() == 10000);
  }
  for (const char* table : {"studies", "trials", "epochs", "epoch_metrics", "objectives",
                            "layer_ranks", "kernel_choices", "decisions", "schema_version"})
    CHECK(sql_int(path, std::string("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND "
                                    "name = '") +
                            table + "'") == 1);
  CHECK(sql_int(path, "SELECT MAX(version) FROM schema_version") == latest_schema_version());
  // Opening again leaves the schema alone.
  auto again = ResultsDb::open(path);
  CHECK(sql_int(path, "SELECT COUNT(*) FROM schema_version") == latest_schema_version());
  CHECK(ResultsDb::upgrade(path) == 0);
}

TEST_CASE("upgrading a version-1 database stores train runs' configs in the one trial shape", "[store]") {
  TempDir dir;
  const std::string path = dir.file("v1.db");
  {
    SQLite::Database db(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    migrate(db, {migrations().front()});
    db.exec("INSERT INTO studies (id, name, objectives, created_at) VALUES (1, 'runs', '', 'x'), "
            "(2, 'sweep', '', 'x')");
    const nlohmann::json train = {{"name", "small"}, {"training", {{"seed", 3}}}, {"seed", 3}};
    const nlohmann::json swept = {{"kind", "early"}, {"point", {{"lr", 1}}}, {"seed", 0}, {"experiment", {{"name", "s"}}}};
    SQLite::Statement insert(db, "INSERT INTO trials (uid, study_id, number, config, config_hash, seed, created_at) "
                                 "VALUES (?, ?, 1, ?, ?, 0, 'x')");
    for (const auto& [uid, study, config] : {std::tuple{"a", 1, train}, std::tuple{"b", 2, swept}}) {
      insert.bind(1, uid);
      insert.bind(2, study);
      insert.bind(3, canonical_json(config));
      insert.bind(4, config_hash(config));
      insert.exec();
      insert.reset();
    }
  }
  CHECK(ResultsDb::upgrade(path) == latest_schema_version() - 1);
  auto db = ResultsDb::open(path);
  const auto trials = list_trials(db, "runs");
  REQUIRE(trials.size() == 1);
  const nlohmann::json shaped = {{"point", nlohmann::json::object()}, {"seed", 3},
                                 {"experiment", {{"name", "small"}, {"training", {{"seed", 3}}}}}};
  CHECK(trials[0].config == shaped);
  CHECK(trials[0].config_hash == config_hash(shaped));
  // A sweep's trials had the shape already.
  CHECK(list_trials(db, "sweep").at(0).config["point"]["lr"] == 1);
  CHECK(sql_int(path, "SELECT json_extract(config, '$.experiment.training.seed') FROM trials WHERE uid = 'a'") == 3);
}

TEST_CASE("upgrading a version-2 database allows the state 'pruned' and adds decisions and checks, "
          "keeping every trial and epoch", "[store]") {
  TempDir dir;
  const std::string path = dir.file("v2.db");
  {
    SQLite::Database db(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    db.exec("PRAGMA foreign_keys = ON");
    migrate(db, {migrations().at(0), migrations().at(1)});
    db.exec("INSERT INTO studies (id, name, objectives, created_at) VALUES (1, 's', 'eval_loss:min', 'x')");
    db.exec("INSERT INTO trials (id, uid, study_id, number, config, config_hash, state, created_at) VALUES "
            "(1, 'a', 1, 1, '{}', 'h1', 'killed', 'x'), (2, 'b', 1, 2, '{}', 'h2', 'complete', 'x')");
    db.exec("INSERT INTO epochs (trial_id, epoch, step, stage, recorded_at) VALUES (1, 1, 5, 'early', 'x')");
    CHECK_THROWS(db.exec("UPDATE trials SET state = 'pruned' WHERE id = 1"));
  }
  CHECK(ResultsDb::upgrade(path) == 3);  // versions 3, 4 and 5
  CHECK(sql_int(path, "SELECT COUNT(*) FROM trials") == 2);
  CHECK(sql_int(path, "SELECT COUNT(*) FROM epochs WHERE trial_id = 1") == 1);
  CHECK(sql_int(path, "SELECT COUNT(*) FROM epochs WHERE shared_from IS NULL") == 1);  // its own, as before
  auto db = ResultsDb::open(path);
  db.sql().exec("UPDATE trials SET state = 'pruned' WHERE id = 1");
  CHECK(load_trial(db, 1)->state == TrialState::Pruned);
  // The constraint still holds for anything else.
  CHECK_THROWS(db.sql().exec("UPDATE trials SET state = 'paused' WHERE id = 2"));
  record_decision(db, 1, {DecisionKind::Pruned, 1, {{"reason", "dominated by trial 2"}}, ""});
  const auto decisions = read_decisions(db.sql(), 1);
  REQUIRE(decisions.size() == 1);
  CHECK(describe(decisions[0]) == "pruned at epoch 1: dominated by trial 2");
  record_check(db, 1, {7, 1, {{"accuracy", 0.5}, {"eval_loss", std::numeric_limits<double>::quiet_NaN()}}});
  record_check(db, 1, {9, 1, {{"accuracy", 0.75}}});
  CHECK(read_checks(db.sql(), 1).size() == 2);
  const auto checks = read_checks(db.sql(), 1, 7);
  REQUIRE(checks.size() == 1);
  CHECK(checks[0].step == 7);
  CHECK(checks[0].metrics.at("accuracy") == 0.5);
  CHECK(std::isnan(checks[0].metrics.at("eval_loss")));
  CHECK(db.sql().execAndGet("PRAGMA integrity_check").getString() == "ok");
  // Deleting the trial deletes its decisions (the foreign key survived the edit).
  db.sql().exec("DELETE FROM trials WHERE id = 1");
  CHECK(sql_int(path, "SELECT COUNT(*) FROM decisions") == 0);
  CHECK(sql_int(path, "SELECT COUNT(*) FROM checks") == 0);
  CHECK(sql_int(path, "SELECT COUNT(*) FROM epochs") == 0);
}

TEST_CASE("a database of another schema version is refused, naming `comera db upgrade`",
          "[store]") {
  TempDir dir;
  const std::string path = dir.file("old.db");
  ResultsDb::open(path);
  sql_exec(path, "DELETE FROM schema_version WHERE version > 1");
  sql_exec(path, "UPDATE schema_version SET version = 0");
  const std::string before = read_bytes(path);
  for (Mode mode : {Mode::ReadWrite, Mode::ReadOnly}) {
    CHECK_THROWS_AS(ResultsDb::open(path, mode), Error);
    CHECK_THROWS_WITH(ResultsDb::open(path, mode),
                      Contains("schema version 0") && Contains("comera db upgrade --db " + path));
  }
  CHECK(read_bytes(path) == before);

  sql_exec(path, "UPDATE schema_version SET version = 99");
  CHECK_THROWS_WITH(ResultsDb::open(path),
                    Contains("version 99, newer than") && Contains("comera db upgrade"));
  CHECK_THROWS_WITH(ResultsDb::upgrade(path), Contains("newer"));
}

TEST_CASE("migrate applies each missing step in its own transaction", "[store]") {
  TempDir dir;
  const std::string path = dir.file("steps.db");
  SQLite::Database db(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  auto create = [](const char* sql) { return [sql](SQLite::Database& d) { d.exec(sql); }; };
  std::vector<Migration> steps = {{1, "a", create("CREATE TABLE a (x)")}};
  CHECK(migrate(db, steps) == 1);
  CHECK(schema_version(db) == 1);

  steps.push_back({2, "b", create("CREATE TABLE b (x)")});
  CHECK(migrate(db, steps) == 1);
  CHECK(schema_version(db) == 2);
  CHECK(db.tableExists("b"));
  CHECK(migrate(db, steps) == 0);

  // A failing step leaves neither its changes nor its version behind.
  steps.push_back({3, "c", create("CREATE TABLE c (x); INSERT INTO missing VALUES (1)")});
  CHECK_THROWS(migrate(db, steps));
  CHECK(schema_version(db) == 2);
  CHECK_FALSE(db.tableExists("c"));
}

TEST_CASE("files that are not comera databases are refused and left byte for byte unchanged",
          "[store]") {
  TempDir dir;
  // A valid comera database with data, then damaged in a b-tree page after the first.
  const std::string damaged = dir.file("damaged.db");
  {
    auto db = ResultsDb::open(damaged);
    const auto study = create_or_get_study(db, "s", json::object());
    enqueue_trials(db, study, sweep_configs(200));
  }
  std::string bytes = read_bytes(damaged);
  const size_t page = 4096;
  REQUIRE(bytes.size() > 3 * page);
  for (size_t i = page; i < bytes.size(); i += 7) bytes[i] = static_cast<char>(0xA5);
  write_bytes(damaged, bytes);

  const std::string text = dir.file("notes.txt");
  write_bytes(text, "these are my notes, not a database\n" + std::string(5000, 'x'));

  const std::string foreign = dir.file("foreign.db");
  {
    SQLite::Database db(foreign, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    db.exec("CREATE TABLE people (name TEXT); INSERT INTO people VALUES ('ada')");
  }

  const std::string bad_header = dir.file("bad_header.db");
  write_bytes(bad_header, std::string("SQLite format 3") + '\0' + std::string(8192, '\x7f'));

  struct Case {
    std::string path;
    std::string says;
  };
  for (const auto& c :
       {Case{damaged, "damaged"}, Case{text, "not a SQLite database"},
        Case{foreign, "not a comera results database (tables people"}, Case{bad_header, ""}}) {
    INFO(c.path);
    const std::string before = read_bytes(c.path);
    for (Mode mode : {Mode::ReadWrite, Mode::ReadOnly}) {
      CHECK_THROWS_AS(ResultsDb::open(c.path, mode), Error);
      CHECK_THROWS_WITH(ResultsDb::open(c.path, mode),
                        Contains(c.path) && Contains(c.says) && Contains("not changed"));
    }
    CHECK_THROWS_WITH(ResultsDb::upgrade(c.path), Contains(c.path) && Contains("not changed"));
    CHECK(read_bytes(c.path) == before);
    // SQLite itself opens side files for a WAL database (the damaged one); none for the rest.
    if (c.path != damaged) {
      CHECK_FALSE(std::filesystem::exists(c.path + "-wal"));
      CHECK_FALSE(std::filesystem::exists(c.path + "-journal"));
    }
  }
}

TEST_CASE("NaN and +-inf survive the round trip and stay queryable", "[store]") {
  TempDir dir;
  const std::string path = dir.file("r.db");
  auto db = ResultsDb::open(path);
  const auto study = create_or_get_study(db, "s", json::object(), "eval_loss:min,size:min");
  const int64_t id = enqueue_trials(db, study, sweep_configs(1))[0];
  const ObjectiveValues values = {{"eval_loss", kNaN}, {"size", kInf},     {"neg", -kInf},
                                  {"zero", 0.0},       {"tiny", 4.9e-324}, {"big", 1.7e308},
                                  {"plain", 0.1}};
  db.write([&] { write_objectives(db.sql(), id, values); });
  const auto back = read_objectives(db.sql(), id);
  REQUIRE(back.size() == values.size());
  CHECK(std::isnan(back.at("eval_loss")));
  for (const char* name : {"size", "neg", "zero", "tiny", "big", "plain"})
    CHECK(back.at(name) == values.at(name));

  record_epoch(
      db, id,
      {1, 10, "early", {{"train_loss", kNaN}, {"eval_loss", -kInf}, {"accuracy", 0.5}}, ""});
  const auto epochs = read_epochs(db.sql(), id);
  REQUIRE(epochs.size() == 1);
  CHECK(std::isnan(epochs[0].metrics.at("train_loss")));
  CHECK(epochs[0].metrics.at("eval_loss") == -kInf);
  CHECK(epochs[0].metrics.at("accuracy") == 0.5);

  // Plain SQL sees the kinds, and infinities order and compare as numbers.
  CHECK(sql_int(path, "SELECT COUNT(*) FROM objectives WHERE kind = 'nan' AND value IS NULL") == 1);
  CHECK(sql_int(path, "SELECT value > 1e308 FROM objectives WHERE name = 'size'") == 1);
  CHECK(sql_int(path, "SELECT value < -1e308 FROM objectives WHERE name = 'neg'") == 1);
  SQLite::Database raw(path, SQLite::OPEN_READONLY);
  CHECK(raw.execAndGet("SELECT name FROM objectives WHERE value IS NOT NULL ORDER BY value DESC "
                       "LIMIT 1")
            .getString() == "size");
  CHECK(raw.execAndGet("SELECT kind FROM epoch_metrics WHERE name = 'train_loss'").getString() ==
        "nan");
}

TEST_CASE("trials: idempotent enqueue, ordered claims, finishing rules, runs", "[store]") {
  TempDir dir;
  const std::string path = dir.file("t.db");
  auto db = ResultsDb::open(path);
  const auto study = create_or_get_study(db, "sweep", {{"grid", {1, 2}}}, "eval_loss:min,size:min");
  CHECK(create_or_get_study(db, "sweep", json::object(), "eval_loss:min,size:min").id == study.id);
  CHECK_THROWS_WITH(create_or_get_study(db, "sweep", json::object(), "eval_loss:max"),
                    Contains("has objectives 'eval_loss:min,size:min'"));
  CHECK_THROWS_WITH(parse_objectives("eval_loss:down"), Contains("name:min or name:max"));

  const auto ids = enqueue_trials(db, study, sweep_configs(3));
  // The same configs written differently map to the same trials.
  const auto again = enqueue_trials(
      db, study,
      {json::parse(R"({"seed": 1.0, "lr": 0.002})"), json::parse(R"({"seed": 5, "lr": 1})")});
  CHECK(again[0] == ids[1]);
  CHECK(sql_int(path, "SELECT COUNT(*) FROM trials") == 4);
  CHECK(sql_int(path, "SELECT seed FROM trials WHERE id = " + std::to_string(ids[2])) == 2);
  CHECK(sql_int(path,
                "SELECT group_concat(number) = '1,2,3,4' FROM (SELECT number FROM trials "
                "ORDER BY number)") == 1);

  const auto env = test_environment();
  const auto first = claim_next_trial(db, study.id, "w1", env);
  REQUIRE(first);
  CHECK(first->id == ids[0]);
  CHECK(first->state == TrialState::Running);
  CHECK(first->worker == "w1");
  CHECK(first->attempts == 1);
  REQUIRE(first->environment);
  CHECK(first->environment->device == "test-cpu");
  CHECK(first->config == json::parse(R"({"lr": 0.001, "seed": 0})"));

  CHECK_THROWS_WITH(finish_trial(db, first->id, "w2", TrialState::Complete, {}),
                    Contains("worker 'w2' cannot finish it"));
  CHECK_THROWS_WITH(finish_trial(db, first->id, "w1", TrialState::Complete, {{"eval_loss", 1.0}}),
                    Contains("without objective 'size'"));
  finish_trial(db, first->id, "w1", TrialState::Complete, {{"eval_loss", 0.5}, {"size", 1000}});
  CHECK(load_trial(db, first->id)->state == TrialState::Complete);
  CHECK_FALSE(load_trial(db, first->id)->ended_at.empty());

  const auto second = claim_next_trial(db, study.id, "w1", env);
  finish_trial(db, second->id, "w1", TrialState::Diverged, {{"eval_loss", kNaN}}, "loss is NaN");
  CHECK(load_trial(db, second->id)->error == "loss is NaN");
  const auto third = claim_next_trial(db, study.id, "w1", env);
  finish_trial(db, third->id, "w1", TrialState::Killed, {}, "interrupted");
  const auto fourth = claim_next_trial(db, study.id, "w1", env);
  CHECK(fourth->number == 4);
  CHECK_FALSE(claim_next_trial(db, study.id, "w1", env));
  CHECK(sql_int(path, "SELECT COUNT(*) FROM trials WHERE state = 'running'") == 1);

  // Plain runs: every start is a new trial of the "runs" study; a repeat gets a new replica.
  const json config = {{"model", "tiny"}, {"seed", 7}};
  const auto run1 = start_run(db, config, "me", env);
  const auto run2 = start_run(db, config, "me", env);
  CHECK(run1.study == kRunsStudy);
  CHECK(run1.state == TrialState::Running);
  CHECK(run1.replica == 0);
  CHECK(run2.replica == 1);
  CHECK(run2.config_hash == run1.config_hash);
  CHECK(list_trials(db, kRunsStudy).size() == 2);
  CHECK(list_trials(db).size() == 6);
}

TEST_CASE("opening waits for another connection's read instead of failing as locked",
          "[store]") {
  // An empty file someone else is reading: the switch to WAL and the schema wait for the lock.
  TempDir dir;
  const std::string path = dir.file("busy.db");
  SQLite::Database reader(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  reader.exec("BEGIN");
  reader.execAndGet("SELECT COUNT(*) FROM sqlite_master");
  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    reader.exec("COMMIT");
  });
  std::string failure, mode;
  try {
    auto db = ResultsDb::open(path);
    mode = db.sql().execAndGet("PRAGMA journal_mode").getString();
  } catch (const std::exception& e) {
    failure = e.what();
  }
  release.join();
  CHECK(failure.empty());
  CHECK(mode == "wal");
  CHECK(sql_int(path, "SELECT COUNT(*) FROM schema_version") == latest_schema_version());
}

TEST_CASE("processes creating, filling and claiming from one database never share a trial",
          "[store]") {
  TempDir dir;
  const std::string path = dir.file("queue.db");
  const int trials = 120, workers = 4;
  int go[2];
  REQUIRE(pipe(go) == 0);
  std::vector<pid_t> children;
  for (int w = 0; w < workers; ++w) {
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      // Child: only SQLite and files here (no Catch2, no LibTorch), then _exit. Every worker
      // creates the same new database, study and trials at once, then claims until none is left.
      close(go[1]);
      char start = 0;
      const bool released = read(go[0], &start, 1) == 0;
      std::ofstream out(dir.file("claims_" + std::to_string(w)));
      int code = released ? 0 : 2;
      try {
        auto db = ResultsDb::open(path);
        const auto study = create_or_get_study(db, "q", json::object());
        enqueue_trials(db, study, sweep_configs(trials));
        const std::string worker = "worker-" + std::to_string(w);
        while (auto t = claim_next_trial(db, study.id, worker, test_environment()))
          out << t->id << "\n";
      } catch (const std::exception& e) {
        out << "error " << e.what() << "\n";
        code = 1;
      }
      out.close();  // _exit skips destructors
      _exit(code);
    }
    children.push_back(pid);
  }
  close(go[0]);
  close(go[1]);  // releases all children at once
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  std::multiset<int64_t> claimed;
  for (int w = 0; w < workers; ++w) {
    std::ifstream in(dir.file("claims_" + std::to_string(w)));
    std::string line;
    while (std::getline(in, line)) {
      INFO(line);
      REQUIRE(line.rfind("error", 0) != 0);
      claimed.insert(std::stoll(line));
    }
  }
  CHECK(sql_int(path, "SELECT COUNT(*) FROM studies") == 1);
  CHECK(sql_int(path, "SELECT COUNT(*) FROM schema_version") == latest_schema_version());
  CHECK(sql_int(path, "SELECT COUNT(*) FROM trials") == trials);
  CHECK(claimed.size() == static_cast<size_t>(trials));
  CHECK(std::set<int64_t>(claimed.begin(), claimed.end()).size() == static_cast<size_t>(trials));
  CHECK(sql_int(path, "SELECT COUNT(*) FROM trials WHERE state = 'running' AND attempts = 1") ==
        trials);
  // Each trial's recorded worker is the one that reported claiming it.
  for (int w = 0; w < workers; ++w) {
    std::ifstream in(dir.file("claims_" + std::to_string(w)));
    int64_t count = 0;
    for (std::string line; std::getline(in, line);) ++count;
    CHECK(sql_int(path, "SELECT COUNT(*) FROM trials WHERE worker = 'worker-" + std::to_string(w) +
                            "'") == count);
  }
}

TEST_CASE("stale running trials are marked failed, re-queued and claimed afresh", "[store]") {
  TempDir dir;
  const std::string path = dir.file("stale.db");
  auto db = ResultsDb::open(path);
  const auto study = create_or_get_study(db, "s", json::object());
  enqueue_trials(db, study, sweep_configs(2));
  const auto env = test_environment();
  const auto dead = *claim_next_trial(db, study.id, "dead", env);
  const auto alive = *claim_next_trial(db, study.id, "alive", env);
  record_epoch(db, dead.id, {0, 5, "early", {{"train_loss", 2.0}}, ""});
  record_layer_ranks(db, dead.id, 0, {{"fc", {1, 4, 1}, 40}});
  sql_exec(path, "UPDATE trials SET heartbeat_at = '2000-01-01T00:00:00.000Z' WHERE id = " +
                     std::to_string(dead.id));

  // A worker whose process is looked up instead is never failed for its heartbeat.
  CHECK(mark_stale_trials(db, 60, [](const std::string& w) { return w != "dead"; }) == 0);
  const auto by_heartbeat = [](const std::string&) { return true; };
  CHECK(mark_stale_trials(db, 60, by_heartbeat) == 1);
  const auto failed = *load_trial(db, dead.id);
  CHECK(failed.state == TrialState::Failed);
  CHECK_THAT(failed.error, Contains("no heartbeat for more than 60 s from worker dead"));
  CHECK(load_trial(db, alive.id)->state == TrialState::Running);
  CHECK_FALSE(heartbeat(db, dead.id, "dead"));
  CHECK(heartbeat(db, alive.id, "alive"));
  CHECK_FALSE(heartbeat(db, alive.id, "someone-else"));
  CHECK(mark_stale_trials(db, 60, by_heartbeat) == 0);

  CHECK(requeue_failed(db, study.id) == 1);
  CHECK(load_trial(db, dead.id)->state == TrialState::Queued);
  CHECK(sql_int(path, "SELECT COUNT(*) FROM epochs WHERE trial_id = " + std::to_string(dead.id)) ==
        0);
  CHECK(sql_int(path, "SELECT COUNT(*) FROM epoch_metrics") == 0);
  CHECK(sql_int(path, "SELECT COUNT(*) FROM layer_ranks") == 0);
  // The presumed-dead worker can no longer finish it; the next claim gets attempt 2.
  CHECK_THROWS_WITH(
      finish_trial(db, dead.id, "dead", TrialState::Complete, {{"eval_loss", 1}, {"size", 1}}),
      Contains("cannot finish it"));
  const auto retry = *claim_next_trial(db, study.id, "new", env);
  CHECK(retry.id == dead.id);
  CHECK(retry.attempts == 2);
}

TEST_CASE("epoch metrics and layer ranks are plain rows a sqlite3 user can query", "[store]") {
  TempDir dir;
  const std::string path = dir.file("m.db");
  auto db = ResultsDb::open(path);
  const auto run = start_run(db, {{"lr", 0.01}}, "me", test_environment());
  record_epoch(db, run.id,
               {0, 100, "early", {{"train_loss", 2.5}, {"size", 1490157}, {"grad_norm", 3.0}}, ""});
  record_epoch(db, run.id, {1, 200, "early", {{"train_loss", 9.0}}, ""});
  record_epoch(db, run.id, {1, 200, "late", {{"train_loss", 1.5}, {"eval_loss", 1.75}}, ""});
  record_layer_ranks(db, run.id, 1,
                     {{"enc.0.q", {1, 12, 30, 30, 30, 12, 1}, 20448}, {"emb", {1, 32, 1}, 999}});

  SQLite::Database raw(path, SQLite::OPEN_READONLY);
  SQLite::Statement rows(raw,
                         "SELECT epoch, step, stage, train_loss, eval_loss, size FROM "
                         "epoch_table ORDER BY epoch");
  REQUIRE(rows.executeStep());
  CHECK(rows.getColumn(1).getInt64() == 100);
  CHECK(rows.getColumn(3).getDouble() == 2.5);
  CHECK(rows.isColumnNull(4));
  CHECK(rows.getColumn(5).getDouble() == 1490157);
  REQUIRE(rows.executeStep());  // the second record of epoch 1 replaced the first
  CHECK(rows.getColumn(2).getString() == "late");
  CHECK(rows.getColumn(3).getDouble() == 1.5);
  CHECK(rows.getColumn(4).getDouble() == 1.75);
  CHECK_FALSE(rows.executeStep());
  CHECK(raw.execAndGet("SELECT value FROM epoch_metrics WHERE name = 'grad_norm'").getDouble() ==
        3.0);
  CHECK(raw.execAndGet("SELECT ranks FROM layer_ranks WHERE layer = 'enc.0.q'").getString() ==
        "1,12,30,30,30,12,1");
  CHECK(raw.execAndGet("SELECT SUM(size) FROM layer_ranks WHERE epoch = 1").getInt64() == 21447);

  const auto ranks = read_layer_ranks(db.sql(), run.id);
  REQUIRE(ranks.at(1).size() == 2);
  CHECK(ranks.at(1)[1].ranks == std::vector<int64_t>{1, 12, 30, 30, 30, 12, 1});
  CHECK(parse_ranks("1,12,30") == std::vector<int64_t>{1, 12, 30});
  CHECK_THROWS_WITH(parse_ranks("1,x,3"), Contains("'x'"));

  const auto table = export_table(db, ExportGrain::Epoch);
  REQUIRE(table.rows.size() == 2);
  const auto column = [&](const std::string& name) {
    return std::find(table.columns.begin(), table.columns.end(), name) - table.columns.begin();
  };
  REQUIRE(column("grad_norm") < static_cast<long>(table.columns.size()));
  CHECK(column("train_loss") < column("grad_norm"));  // standard metrics come first
  CHECK(table.rows[0][column("config.lr")] == 0.01);
  CHECK(table.rows[1][column("eval_loss")] == 1.75);
}

TEST_CASE("kernel choices are found only under the same key and fingerprint", "[store]") {
  TempDir dir;
  auto db = ResultsDb::open(dir.file("k.db"));
  const KernelKey key{"12,8,8|8,8,12", "1,12,30,30,30,12,1", 4096, "float32", "cpu", 2, "1.13.1"};
  KernelChoice choice{key, "cpu-a|threads=2", R"(["merge_left","merge_right"])", 1.25, 20, "abc",
                      ""};
  put_kernel_choice(db, choice);
  const auto got = get_kernel_choice(db, key, "cpu-a|threads=2");
  REQUIRE(got);
  CHECK(got->choice == choice.choice);
  CHECK(got->median_ms == 1.25);
  CHECK_FALSE(got->created_at.empty());
  CHECK_FALSE(get_kernel_choice(db, key, "cpu-b|threads=2"));
  KernelKey other = key;
  other.token_bucket = 8192;
  CHECK_FALSE(get_kernel_choice(db, other, "cpu-a|threads=2"));

  choice.median_ms = 0.9;
  choice.choice = R"(["core_by_core"])";
  put_kernel_choice(db, choice);
  CHECK(list_kernel_choices(db).size() == 1);
  CHECK(get_kernel_choice(db, key, "cpu-a|threads=2")->median_ms == 0.9);
}

TEST_CASE("merging a same-named study of another spec is refused, naming both files", "[store]") {
  TempDir dir;
  const std::string a = dir.file("a.db"), b = dir.file("b.db"), c = dir.file("c.db");
  const auto configs = sweep_configs(2);
  for (const auto& [path, spec] : {std::pair<std::string, json>{a, {{"axes", "L0"}}}, {b, {{"axes", "S0"}}}}) {
    auto db = ResultsDb::open(path);
    enqueue_trials(db, create_or_get_study(db, "s", spec), {configs[path == a ? 0 : 1]});
  }
  auto into = ResultsDb::open(c);
  auto from_a = ResultsDb::open(a, Mode::ReadOnly), from_b = ResultsDb::open(b, Mode::ReadOnly);
  merge_database(into, from_a);
  CHECK_THROWS_WITH(merge_database(into, from_b),
                    Contains("study 's'") && Contains(b) && Contains(c) && Contains("another sweep spec"));
  CHECK(sql_int(c, "SELECT COUNT(*) FROM trials") == 1);

  // Through the CLI, one failing input leaves the output as it was, earlier inputs included.
  const std::string d = dir.file("d.db");
  ResultsDb::open(d);
  const auto r = comera::testing::run_cli("merge " + a + " " + b + " -o " + d);
  INFO(r.output);
  CHECK(r.status != 0);
  CHECK_THAT(r.output, Contains("another sweep spec"));
  CHECK(sql_int(d, "SELECT COUNT(*) FROM trials") == 0);
  CHECK(sql_int(d, "SELECT COUNT(*) FROM studies") == 0);

  // A new output is not even created, and the advice is a command that renames.
  const auto fresh = comera::testing::run_cli("merge " + a + " " + b + " -o " + dir.file("new.db"));
  INFO(fresh.output);
  CHECK(fresh.status != 0);
  CHECK_THAT(fresh.output, Contains("another sweep spec") && Contains("sqlite3 " + b + " \"UPDATE studies SET name = 's_2' WHERE name = 's'\""));
  CHECK_FALSE(std::filesystem::exists(dir.file("new.db")));
  CHECK_FALSE(std::filesystem::exists(dir.file("new.db-wal")));
  // Renamed as advised, the two merge.
  sql_exec(b, "UPDATE studies SET name = 's_2' WHERE name = 's'");
  CHECK(comera::testing::run_cli("merge " + a + " " + b + " -o " + dir.file("new.db")).status == 0);
  CHECK(sql_int(dir.file("new.db"), "SELECT COUNT(*) FROM studies") == 2);
}

TEST_CASE("merging overlapping databases leaves no duplicates", "[store]") {
  TempDir dir;
  const std::string a = dir.file("a.db"), b = dir.file("b.db"), c = dir.file("c.db");
  const auto env = test_environment();
  const ObjectiveValues done = {{"eval_loss", 0.5}, {"size", 100}};
  const auto configs = sweep_configs(4);
  {
    auto db = ResultsDb::open(a);
    const auto study = create_or_get_study(db, "s", json::object());
    enqueue_trials(db, study, {configs[0], configs[1], configs[2]});
    const auto t = *claim_next_trial(db, study.id, "wa", env);
    record_epoch(db, t.id, {0, 1, "early", {{"train_loss", 1.0}}, ""});
    record_check(db, t.id, {1, 0, {{"accuracy", 0.25}}});
    finish_trial(db, t.id, "wa", TrialState::Complete, done);
    start_run(db, {{"run", 1}}, "wa", env);
    put_kernel_choice(db,
                      {{"m", "r", 1, "float32", "cpu", 2, "1.13.1"}, "fp", "[]", 1.0, 3, "", ""});
  }
  std::filesystem::copy_file(a, b);  // b shares a's history, uids included
  {
    auto db = ResultsDb::open(b);
    const auto study = *find_study(db, "s");
    const auto t = *claim_next_trial(db, study.id, "wb", env);  // configs[1], queued in a
    record_epoch(db, t.id, {0, 1, "early", {{"train_loss", 0.7}}, ""});
    finish_trial(db, t.id, "wb", TrialState::Complete, done);
    enqueue_trials(db, study, {configs[3]});
    start_run(db, {{"run", 1}}, "wb", env);  // a second, distinct run of the same config
  }
  {
    auto into = ResultsDb::open(c);
    for (const auto& source : {a, b, a, b}) {
      auto from = ResultsDb::open(source, Mode::ReadOnly);
      merge_database(into, from);
    }
    auto from_b = ResultsDb::open(b, Mode::ReadOnly);
    const auto counts = merge_database(into, from_b);
    CHECK(counts.trials_added == 0);
    CHECK(counts.trials_replaced == 0);
    CHECK(counts.trials_skipped == 6);
  }
  CHECK(sql_int(c, "SELECT COUNT(*) FROM studies") == 2);
  CHECK(sql_int(c,
                "SELECT COUNT(*) FROM trials t JOIN studies s ON s.id = t.study_id WHERE "
                "s.name = 's'") == 4);
  CHECK(sql_int(c,
                "SELECT COUNT(*) FROM (SELECT study_id, config_hash, replica FROM trials GROUP "
                "BY 1, 2, 3 HAVING COUNT(*) > 1)") == 0);
  CHECK(sql_int(c, "SELECT COUNT(*) FROM trials WHERE state = 'complete'") == 2);
  CHECK(sql_int(c, "SELECT COUNT(*) FROM trial_table WHERE study = 'runs'") == 2);
  CHECK(sql_int(c, "SELECT COUNT(*) FROM epochs") == 2);
  CHECK(sql_int(c, "SELECT COUNT(*) FROM checks WHERE step = 1 AND value = 0.25") == 1);
  CHECK(sql_int(c, "SELECT COUNT(*) FROM objectives") == 4);
  CHECK(sql_int(c, "SELECT COUNT(*) FROM kernel_choices") == 1);
  CHECK(sql_int(c,
                "SELECT COUNT(DISTINCT number) FROM trials t JOIN studies s ON s.id = "
                "t.study_id WHERE s.name = 's'") == 4);

  // The same config finished in an unrelated database (other uids) is not a new trial, and a
  // more finished copy replaces a less finished one.
  const std::string d = dir.file("d.db");
  {
    auto db = ResultsDb::open(d);
    const auto study = create_or_get_study(db, "s", json::object());
    enqueue_trials(db, study, {configs[2], configs[0]});
    const auto t = *claim_next_trial(db, study.id, "wd", env);
    finish_trial(db, t.id, "wd", TrialState::Complete, done);
  }
  auto into = ResultsDb::open(c);
  auto from = ResultsDb::open(d, Mode::ReadOnly);
  const auto counts = merge_database(into, from);
  CHECK(counts.trials_replaced == 1);  // configs[2]: queued in c, complete in d
  CHECK(counts.trials_skipped == 1);   // configs[0]: complete in both
  CHECK(sql_int(c, "SELECT COUNT(*) FROM trial_table WHERE study = 's'") == 4);
  CHECK(sql_int(c, "SELECT COUNT(*) FROM trials WHERE state = 'complete'") == 3);
}

TEST_CASE("merged decisions name the trials by the numbers the merge gave them", "[store]") {
  TempDir dir;
  const std::string a = dir.file("a.db"), b = dir.file("b.db"), c = dir.file("c.db");
  const auto env = test_environment();
  const auto configs = sweep_configs(5);
  {  // Shard 1: configs 0 and 1 as trials 1 and 2.
    auto db = ResultsDb::open(a);
    enqueue_trials(db, create_or_get_study(db, "s", json::object()), {configs[0], configs[1]});
  }
  {  // Shard 2: configs 2, 3, 4 as trials 1, 2, 3; #3 pruned by #1, #2 proposed between #1 and #3.
    auto db = ResultsDb::open(b);
    const auto study = create_or_get_study(db, "s", json::object());
    const auto ids = enqueue_trials(db, study, {configs[2], configs[3], configs[4]});
    Decision pruned{DecisionKind::Pruned, 0,
                    {{"reason", "dominated at step 13 (epoch 0) by trials 1, 2 (margins: size 0)"},
                     {"dominated_by", {{{"trial", 1}}, {{"trial", 2}}}}}, ""};
    record_decision(db, ids[2], pruned);
    for (int k = 0; k < 3; ++k) {
      const auto t = *claim_next_trial(db, study.id, "wb", env);
      finish_trial(db, t.id, "wb", t.number == 3 ? TrialState::Pruned : TrialState::Complete,
                   {{"eval_loss", 1.0}, {"size", 1.0}},
                   t.number == 3 ? describe(pruned) : "");
    }
    record_decision(db, ids[1], {DecisionKind::Proposed, std::nullopt,
                                 {{"reason", "gp-ehvi: fills the gap between trial 1 and trial 3 (expected HV gain 0.1), "
                                             "from trial 1's trained early stage"},
                                  {"between", {"trial 1", "trial 3"}}}, ""});
  }
  {
    auto into = ResultsDb::open(c);
    for (const auto& source : {a, b}) {
      auto from = ResultsDb::open(source, Mode::ReadOnly);
      merge_database(into, from);
    }
  }
  // b's trials 1, 2, 3 are 3, 4, 5 in c.
  auto db = ResultsDb::open(c, Mode::ReadOnly);
  auto trial_numbered = [&](int64_t number) {
    for (const auto& t : list_trials(db, "s"))
      if (t.number == number) return t;
    FAIL("no trial " << number);
    return Trial();
  };
  const auto five = trial_numbered(5), four = trial_numbered(4);
  CHECK(five.config == configs[4]);
  const auto pruned = read_decisions(db.sql(), five.id).at(0);
  CHECK(pruned.detail["reason"] == "dominated at step 13 (epoch 0) by trials 3, 4 (margins: size 0)");
  CHECK(pruned.detail["dominated_by"] == json{{{"trial", 3}}, {{"trial", 4}}});
  CHECK(five.error == "pruned at epoch 0: dominated at step 13 (epoch 0) by trials 3, 4 (margins: size 0)");
  const auto proposed = read_decisions(db.sql(), four.id).at(0);
  CHECK(proposed.detail["reason"] == "gp-ehvi: fills the gap between trial 3 and trial 5 (expected HV gain 0.1), "
                                     "from trial 3's trained early stage");
  CHECK(proposed.detail["between"] == json{"trial 3", "trial 5"});
}

TEST_CASE("read-only queries answer SELECTs and refuse anything that writes", "[store]") {
  TempDir dir;
  const std::string path = dir.file("q.db");
  {
    auto db = ResultsDb::open(path);
    create_or_get_study(db, "s", json::object());
  }
  const std::string before = read_bytes(path);
  auto db = ResultsDb::open(path, Mode::ReadOnly);
  const auto table = read_only_query(db, "SELECT name, objectives FROM studies;  ");
  CHECK(table.columns == std::vector<std::string>{"name", "objectives"});
  REQUIRE(table.rows.size() == 1);
  CHECK(table.rows[0][0] == "s");

  for (const std::string& sql :
       std::vector<std::string>{"DELETE FROM studies",
                                "INSERT INTO studies (name, objectives, created_at) VALUES ('x', "
                                "'a:min', 'now')",
                                "DROP TABLE trials", "VACUUM INTO '" + dir.file("copy.db") + "'",
                                "PRAGMA journal_mode = DELETE"}) {
    INFO(sql);
    CHECK_THROWS_WITH(read_only_query(db, sql), Contains("read-only"));
  }
  CHECK_THROWS_WITH(read_only_query(db, "SELECT 1; DELETE FROM studies"),
                    Contains("more than one statement"));
  CHECK_THROWS_WITH(read_only_query(db, "SELEC 1"), Contains("does not compile"));
  // The connection itself refuses writes too, whatever path they take.
  CHECK_THROWS(db.sql().exec("DELETE FROM studies"));
  CHECK_THROWS_WITH(create_or_get_study(db, "t", json::object()), Contains("read-only"));
  CHECK(sql_int(path, "SELECT COUNT(*) FROM studies") == 1);
  CHECK_FALSE(std::filesystem::exists(dir.file("copy.db")));
}

TEST_CASE("columns that share a name are all kept, under one name in every output form", "[store][cli]") {
  FlatTable table;
  table.columns = {"value", "value", "value_2", "value"};
  table.rows = {{1, 2, 3, 4}};
  CHECK(to_json(table) == json::parse(R"([{"value": 1, "value_3": 2, "value_2": 3, "value_4": 4}])"));
  std::ostringstream csv, jsonl, text;
  write_csv(csv, table);
  CHECK(csv.str() == "value,value_3,value_2,value_4\n1,2,3,4\n");
  write_jsonl(jsonl, table);
  CHECK(json::parse(jsonl.str()) == to_json(table)[0]);
  write_text(text, table);
  CHECK(text.str() == "value  value_3  value_2  value_4\n1      2        3        4\n");

  TempDir dir;
  ResultsDb::open(dir.file("q.db"));
  const auto r = comera::testing::run_cli("query --db " + dir.file("q.db") + " --json \"SELECT 1 AS value, 2 AS value\"");
  INFO(r.output);
  CHECK(json::parse(r.output) == json::parse(R"([{"value": 1, "value_2": 2}])"));
}

TEST_CASE("db info counts the rows of every table, decisions and checks included", "[store][cli]") {
  TempDir dir;
  {
    auto db = ResultsDb::open(dir.file("i.db"));
    const auto id = enqueue_trials(db, create_or_get_study(db, "s", json::object()), {sweep_configs(1)[0]}).at(0);
    record_decision(db, id, {DecisionKind::Proposed, std::nullopt, {{"reason", "r"}}, ""});
    record_check(db, id, {1, 0, {{"accuracy", 0.25}, {"eval_loss", 1.0}}});
  }
  const auto r = comera::testing::run_cli("db info --db " + dir.file("i.db") + " --json");
  INFO(r.output);
  const json rows = json::parse(r.output)["rows"];
  CHECK(rows == json{{"studies", 1}, {"trials", 1}, {"epochs", 0}, {"epoch_metrics", 0}, {"objectives", 0},
                     {"layer_ranks", 0}, {"kernel_choices", 0}, {"decisions", 1}, {"checks", 2}});
}

TEST_CASE("the comera CLI lists, shows, queries, exports and merges", "[store][cli]") {
  TempDir dir;
  const std::string path = dir.file("cli.db");
  int64_t id = 0;
  {
    auto db = ResultsDb::open(path);
    const auto run = start_run(db, {{"lr", 0.5}, {"model", {{"d", 3}}}}, "me", test_environment());
    id = run.id;
    record_epoch(db, id, {0, 10, "early", {{"train_loss", kNaN}, {"eval_loss", 2.0}}, ""});
    record_layer_ranks(db, id, 0, {{"fc", {1, 3, 1}, 12}});
    finish_trial(db, id, "me", TrialState::Diverged, {{"eval_loss", kInf}, {"size", 12}});
    // A late-stage run: S0 = 100 entries after an early stage that ended at 400 (S0 = 0.25),
    // ended at 150 (1.5 x S0) with its training loss 0.27 above L0, its embedding pruned to rank 0.
    const auto late = start_run(db, {{"lr", 0.1}}, "me", test_environment());
    record_epoch(db, late.id, {0, 5, "early", {{"tensorized_size", 400}, {"accuracy", 0.5}}, ""});
    record_epoch(db, late.id,
                 {1, 10, "late",
                  {{"tensorized_size", 150}, {"accuracy", 0.4321}, {"size", 2061530},
                   {"train_loss", 2.37}, {"loss_target", 2.1}, {"size_target", 100}},
                  ""});
    record_layer_ranks(db, late.id, 1, {{"emb", {1, 0, 1}, 0}, {"fc", {1, 2, 1}, 150}});
    finish_trial(db, late.id, "me", TrialState::Complete,
                 {{"accuracy", 0.4321}, {"eval_loss", 1.9}, {"size", 2061530}, {"compression", 48.93}});
  }
  auto run = [&](const std::string& args, int& status) {
    const auto r = comera::testing::run_cli(args);
    status = r.status;
    return r.output;
  };
  int status = 0;
  const auto shown =
      json::parse(run("runs show " + std::to_string(id) + " --json --db " + path, status));
  CHECK(status == 0);
  CHECK(shown["state"] == "diverged");
  CHECK(shown["objectives"]["eval_loss"] == "inf");
  CHECK(shown["epochs"][0]["train_loss"] == "nan");
  CHECK(shown["ranks"]["0"][0]["ranks"] == json::array({1, 3, 1}));
  CHECK(shown["config"]["model"]["d"] == 3);

  CHECK_THAT(run("query \"DELETE FROM trials\" --db " + path, status), Contains("read-only"));
  CHECK(status != 0);
  const std::string listed = run("runs list --db " + path, status);
  CHECK(status == 0);
  CHECK_THAT(listed, Contains("diverged") &&
                         Contains("late   L0 2.1, S0 0.25  complete") &&
                         Contains("43.21%") && Contains("2,061,530") && Contains("48.9x") &&
                         Contains("1.5 ") && Contains("0.27 ") && Contains("lost emb"));
  const auto runs = json::parse(run("runs list --json --db " + path, status));
  REQUIRE(runs.size() == 2);
  CHECK(runs[0]["kind"] == "early");
  CHECK(runs[0]["target"].is_null());
  CHECK(runs[1]["kind"] == "late");
  CHECK(runs[1]["target"]["loss"] == Approx(2.1));
  CHECK(runs[1]["target"]["size_ratio"] == Approx(0.25));
  CHECK(runs[1]["size_vs_target"] == Approx(1.5));
  CHECK(runs[1]["loss_vs_target"] == Approx(0.27));
  CHECK(runs[0]["loss_vs_target"].is_null());
  CHECK(runs[1]["lost_layers"] == json::array({"emb"}));
  CHECK(runs[1]["objectives"]["accuracy"] == Approx(0.4321));

  const std::string csv = run("export --per epoch --format csv --db " + path, status);
  CHECK(status == 0);
  CHECK_THAT(csv, Contains("train_loss") && Contains("config.model.d") && Contains(",nan,"));

  const std::string merged = dir.file("merged.db");
  CHECK_THAT(run("merge " + path + " " + path + " -o " + merged, status),
             Contains("2 trials added") && Contains("0 trials added"));
  CHECK(sql_int(merged, "SELECT COUNT(*) FROM trials") == 2);
  // An output that cannot be a database: the fix names merge's own option.
  const std::string refused = run("merge " + path + " -o /dev/null", status);
  CHECK(status != 0);
  CHECK_THAT(refused, Contains("/dev/null") && Contains("Give -o a database file") && !Contains("--db"));
  // Every input is opened before the output is made or written.
  const std::string fresh = dir.file("fresh.db");
  const std::string missing = run("merge " + path + " " + dir.file("nope.db") + " -o " + fresh, status);
  CHECK(status != 0);
  CHECK_THAT(missing, Contains("nope.db") && Contains("each input") && !Contains("trials added"));
  CHECK_FALSE(std::filesystem::exists(fresh));

  // A study the database lacks is named, not listed as nothing.
  for (const std::string& command : {"runs list --study nope", "export --study nope"}) {
    const auto out = run(command + " --db " + path, status);
    INFO(command);
    CHECK(status != 0);
    CHECK_THAT(out, Contains("no study 'nope'") && Contains("it has: runs"));
  }
  // A word no option takes is an error, not left out.
  CHECK_THAT(run("runs list " + path + " --db " + path, status), Contains("unexpected argument '" + path + "'"));
  CHECK(status != 0);
  CHECK_THAT(run("query SELECT id FROM trials --db " + path, status),
             Contains("unexpected argument 'id'") && Contains("in quotes"));
  CHECK(status != 0);
}

TEST_CASE("a foreign SQLite file with a schema_version table is refused and left unchanged",
          "[store]") {
  TempDir dir;
  const std::string path = dir.file("other_app.db");
  {
    SQLite::Database db(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    db.exec("CREATE TABLE schema_version (version INTEGER); INSERT INTO schema_version VALUES (1);"
            "CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)");
  }
  const std::string before = read_bytes(path);
  for (Mode mode : {Mode::ReadWrite, Mode::ReadOnly}) {
    CHECK_THROWS_AS(ResultsDb::open(path, mode), Error);
    CHECK_THROWS_WITH(ResultsDb::open(path, mode),
                      Contains(path) && Contains("not a comera results database") &&
                          Contains("not changed"));
  }
  CHECK_THROWS_WITH(ResultsDb::upgrade(path), Contains(path) && Contains("not changed"));
  CHECK(read_bytes(path) == before);
  CHECK(sql_int(path, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'studies'") == 0);
  SQLite::Database raw(path, SQLite::OPEN_READONLY);
  CHECK(raw.execAndGet("PRAGMA journal_mode").getString() == "delete");
}

TEST_CASE("comera databases carry an application id; older ones are known by their tables",
          "[store]") {
  TempDir dir;
  const std::string path = dir.file("r.db");
  ResultsDb::open(path);
  CHECK(sql_int(path, "PRAGMA application_id") == kApplicationId);
  // As made before the id: read as it is, marked once opened for writing.
  sql_exec(path, "PRAGMA application_id = 0");
  ResultsDb::open(path, Mode::ReadOnly);
  CHECK(sql_int(path, "PRAGMA application_id") == 0);
  ResultsDb::open(path);
  CHECK(sql_int(path, "PRAGMA application_id") == kApplicationId);
  // Without one of its tables it is not recognised, and not touched.
  sql_exec(path, "PRAGMA application_id = 0; DROP TABLE kernel_choices");
  CHECK_THROWS_WITH(ResultsDb::open(path), Contains("not a comera results database"));
  CHECK(sql_int(path, "PRAGMA application_id") == 0);
  // Another program's id on an empty database: not ours to fill.
  const std::string theirs = dir.file("theirs.db");
  sql_exec_create(theirs, "PRAGMA application_id = 42");
  CHECK_THROWS_WITH(ResultsDb::open(theirs), Contains("application id 42") && Contains("not changed"));
}

TEST_CASE("worker ids: host, pid and start time; older and foreign forms", "[store]") {
  const auto mine = parse_worker_id(default_worker_id());
  REQUIRE(mine);
  CHECK(mine->host == host_name());
  CHECK(mine->pid == getpid());
  REQUIRE(mine->start);
  CHECK(*mine->start == process_start_time(getpid()));
  const auto old = parse_worker_id("box:123");
  REQUIRE(old);
  CHECK(old->host == "box");
  CHECK(old->pid == 123);
  CHECK_FALSE(old->start);
  CHECK(parse_worker_id("box:123:456")->start == 456u);
  for (const char* other : {"w", "box:train:/runs/a.pt", "box:0", ":5", "box:x:5x"}) {
    INFO(other);
    CHECK_FALSE(parse_worker_id(other));
  }
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  CHECK_FALSE(process_start_time(child));
}

TEST_CASE("--db on a named pipe or /dev/null is refused at once, nothing created beside it",
          "[store][cli]") {
  TempDir dir;
  const std::string pipe = dir.file("pipe");
  REQUIRE(mkfifo(pipe.c_str(), 0600) == 0);
  const bool had_journal = std::filesystem::exists("/dev/null-journal");
  ResultsDb::open(dir.file("in.db"));
  for (const std::string& target : {pipe, std::string("/dev/null")})
    for (const std::string& args : {"runs list --db " + target, "db upgrade --db " + target,
                                   "merge " + dir.file("in.db") + " -o " + target}) {
      // timeout: opening a pipe blocks until someone writes to it.
      const auto r = run_process(
          {"/bin/sh", "-c", "timeout 20 " + comera::testing::cli_path() + " " + args}, "comera",
          ErrorOutput::Merge);
      INFO(args << "\n" << r.output);
      CHECK(r.status == 1);
      CHECK_THAT(r.output, Contains(target) && Contains("not a regular file"));
    }
  CHECK(std::filesystem::is_fifo(pipe));
  CHECK(std::filesystem::exists("/dev/null-journal") == had_journal);
  CHECK_FALSE(std::filesystem::exists(pipe + "-journal"));
  CHECK_FALSE(std::filesystem::exists(pipe + "-wal"));
}

TEST_CASE("read-only databases and folders: reading commands work, writing ones name the file "
          "and the fix before any work",
          "[store][cli][readonly]") {
  TempDir dir;
  const std::string folder = dir.file("shelf");
  const std::string path = folder + "/r.db";
  {
    auto db = ResultsDb::open(path);
    const auto study = create_or_get_study(db, "s", json::object());
    const auto ids = enqueue_trials(db, study, sweep_configs(2));
    claim_next_trial(db, study.id, "w", test_environment());
    finish_trial(db, ids[0], "w", TrialState::Complete, {{"eval_loss", 0.5}, {"size", 10}});
  }
  const std::string other = dir.file("other.db");
  {
    auto db = ResultsDb::open(other);
    start_run(db, {{"lr", 1}}, "me", test_environment());
  }
  const std::string before = read_bytes(path);
  for (const std::string& target : {folder, path}) {
    INFO("read-only: " << target);
    for (const std::string& args :
         {"runs list --db " + path, "runs show 1 --db " + path, "db info --db " + path,
          "query \"SELECT COUNT(*) AS n FROM trials\" --db " + path,
          "export --per trial --db " + path, "pareto --study s --db " + path}) {
      const auto r = comera::testing::run_cli_read_only(target, args);
      REQUIRE(r);
      INFO(args << "\n" << r->output);
      CHECK(r->status == 0);
      CHECK_THAT(r->output, !Contains(": error:"));
    }
    for (const std::string& args : {"merge " + other + " -o " + path, "db upgrade --db " + path}) {
      const auto r = comera::testing::run_cli_read_only(target, args);
      REQUIRE(r);
      INFO(args << "\n" << r->output);
      CHECK(r->status == 1);
      CHECK_THAT(r->output, Contains("'" + path + "'") && Contains("read-only") &&
                                Contains("writable") && !Contains("trials added"));
    }
    CHECK(read_bytes(path) == before);
  }
}

TEST_CASE("a running trial's writes wait out another process's long write lock", "[store]") {
  TempDir dir;
  const std::string path = dir.file("busy.db");
  auto db = ResultsDb::open(path);
  const auto study = create_or_get_study(db, "s", json::object());
  const int64_t id = enqueue_trials(db, study, sweep_configs(1))[0];
  claim_next_trial(db, study.id, "w", test_environment());
  // A short busy timeout stands in for a lock held past the default's 10 s.
  db.sql().setBusyTimeout(50);
  // Runs fn while another process holds the write lock for a second; fn's error, if any.
  auto while_locked = [&](const std::function<void()>& fn) {
    int locked[2];
    REQUIRE(pipe(locked) == 0);
    const pid_t holder = fork();
    REQUIRE(holder >= 0);
    if (holder == 0) {
      // Child: plain SQLite only, then _exit.
      int code = 0;
      try {
        SQLite::Database other(path, SQLite::OPEN_READWRITE);
        other.exec("BEGIN IMMEDIATE");
        if (write(locked[1], "x", 1) != 1) code = 2;
        std::this_thread::sleep_for(std::chrono::seconds(1));
        other.exec("COMMIT");
      } catch (const std::exception&) {
        code = 1;
      }
      _exit(code);
    }
    close(locked[1]);
    char signal = 0;
    REQUIRE(read(locked[0], &signal, 1) == 1);
    close(locked[0]);
    std::string failure;
    try {
      fn();
    } catch (const std::exception& e) {
      failure = e.what();
    }
    int status = 0;
    waitpid(holder, &status, 0);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    return failure;
  };
  bool beat = false;
  CHECK(while_locked([&] { beat = heartbeat(db, id, "w"); }) == "");
  CHECK(beat);
  CHECK(while_locked([&] { record_epoch(db, id, {0, 1, "early", {{"train_loss", 1.0}}, ""}); }) ==
        "");
  CHECK(sql_int(path, "SELECT COUNT(*) FROM epochs") == 1);
}

TEST_CASE("a late trial shows its configured targets before any late epoch records them", "[store]") {
  TempDir dir;
  auto db = ResultsDb::open(dir.file("r.db"));
  const auto study = create_or_get_study(db, "s", json::object());
  auto late = [](json stage) {
    return json{{"kind", "late"}, {"experiment", {{"training", {{"late_stage", stage}}}}}};
  };
  const auto ids = enqueue_trials(db, study, {late({{"loss_target", 2.3}, {"size_ratio", 0.1}}),
                                              late({{"loss_target", 2.5}, {"size_target", 4000}}),
                                              late({{"loss_target", 2.7}}), json{{"kind", "dense"}}});
  auto target = [&](int64_t id) { return trial_outcome(db, *load_trial(db, id)).target_text(); };
  CHECK(target(ids[0]) == "L0 2.3, S0 0.1");
  CHECK(target(ids[1]) == "L0 2.5, S0 4000 entries");
  CHECK(target(ids[2]) == "L0 2.7");
  CHECK(target(ids[3]).empty());
}

TEST_CASE("a running trial whose heartbeat stopped is told as such by runs list and runs show",
          "[store][cli]") {
  TempDir dir;
  const std::string path = dir.file("r.db");
  int64_t silent_id = 0;
  {
    auto db = ResultsDb::open(path);
    const auto silent = start_run(db, {{"lr", 0.5}}, "gone", test_environment());
    start_run(db, {{"lr", 0.1}}, "beating", test_environment());
    silent_id = silent.id;
  }
  // Killed outright ten minutes ago: its last heartbeat is that old; the other one beats now.
  sql_exec(path, "UPDATE trials SET heartbeat_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-600 seconds') "
                 "WHERE id = " + std::to_string(silent_id));
  const auto listed = comera::testing::run_cli("runs list --db " + path);
  CHECK(listed.status == 0);
  CHECK_THAT(listed.output, Contains("no heartbeat for 10") && Contains("train --resume goes on"));
  CHECK(std::count(listed.output.begin(), listed.output.end(), '\n') == 3);
  const auto rows = json::parse(comera::testing::run_cli("runs list --json --db " + path).output);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0]["heartbeat_age_s"].get<double>() == Approx(600).margin(60));
  CHECK(rows[1]["heartbeat_age_s"].get<double>() < 60);
  CHECK_THAT(comera::testing::run_cli("runs show " + std::to_string(silent_id) + " --db " + path).output,
             Contains("no heartbeat for 10"));
  CHECK_THAT(comera::testing::run_cli("runs show " + std::to_string(silent_id + 1) + " --db " + path).output,
             !Contains("no heartbeat"));
}
