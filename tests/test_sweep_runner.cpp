// Sweep runs on tiny trials (a one-layer d_model 8 model, a few steps on the MNLI fixtures):
// resuming, interrupted and stale trials, retries, a real `comera sweep` killed mid-trial and run
// again, two concurrent processes on one database, and shards. Checks read the database through
// plain SQL, not the store's readers.
#include "core/util/error.h"
#include "core/util/source_dir.h"
#include "search/pareto/study_front.h"
#include "search/store/epoch_metrics.h"
#include "search/store/trial_queue.h"
#include "search/sweep/adaptive.h"
#include "search/sweep/sweep_runner.h"
#include "search/sweep/trial_expansion.h"
#include "tests/support/catch.h"
#include "tests/support/cli_process.h"
#include "tests/support/read_only.h"
#include "tests/support/temp_dir.h"
#include "tests/support/tiny_sweep.h"

#include <SQLiteCpp/Column.h>
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <algorithm>
#include <fstream>
#include <map>
#include <tuple>
#include <set>

using namespace comera;
using namespace comera::sweep;
using Catch::Matchers::Contains;
using comera::testing::TempDir;
using nlohmann::json;
using comera::testing::tiny_sweep;

namespace {

struct Row {
  int64_t number, attempts, epochs;
  std::string state, worker, ended_at;
  double eval_loss;  // the final objective, -1 when none
};

// Trials of the database by number, read with plain SQL.
std::vector<Row> read_rows(const std::string& path) {
  SQLite::Database db(path, SQLite::OPEN_READONLY, 5000);
  SQLite::Statement q(db,
                      "SELECT number, attempts, (SELECT COUNT(*) FROM epochs e WHERE e.trial_id = "
                      "t.id), state, COALESCE(worker, ''), COALESCE(ended_at, ''), "
                      "COALESCE((SELECT value FROM objectives o WHERE o.trial_id = t.id AND "
                      "o.name = 'eval_loss'), -1) FROM trials t ORDER BY number");
  std::vector<Row> rows;
  while (q.executeStep())
    rows.push_back({q.getColumn(0).getInt64(), q.getColumn(1).getInt64(),
                    q.getColumn(2).getInt64(), q.getColumn(3).getString(),
                    q.getColumn(4).getString(), q.getColumn(5).getString(),
                    q.getColumn(6).getDouble()});
  return rows;
}

// The distinct objective names the database's trials recorded, in order.
std::vector<std::string> objective_names(const std::string& path) {
  SQLite::Database db(path, SQLite::OPEN_READONLY);
  SQLite::Statement q(db, "SELECT DISTINCT name FROM objectives ORDER BY name");
  std::vector<std::string> names;
  while (q.executeStep()) names.push_back(q.getColumn(0).getString());
  return names;
}

// Trial 2 is the early-stage baseline, which stops where the late stage starts.
int64_t expected_epochs(const Row& row, int epochs) { return row.number == 2 ? epochs / 2 : epochs; }

// A process of this host standing in for a sweep worker: it reports its worker id, then lives
// until end() (end() at once for a worker that is gone).
class ChildWorker {
 public:
  ChildWorker() {
    int id_pipe[2];
    REQUIRE(pipe(id_pipe) == 0);
    REQUIRE(pipe(end_pipe_) == 0);
    pid_ = fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      // Child: no Catch2, no LibTorch, then _exit.
      close(id_pipe[0]);
      close(end_pipe_[1]);
      const std::string id = store::default_worker_id();
      const bool told = write(id_pipe[1], id.data(), id.size()) == static_cast<ssize_t>(id.size());
      close(id_pipe[1]);
      char end = 0;
      const ssize_t ignored = read(end_pipe_[0], &end, 1);
      (void)ignored;
      _exit(told ? 0 : 1);
    }
    close(id_pipe[1]);
    close(end_pipe_[0]);
    char buffer[512];
    for (ssize_t n; (n = read(id_pipe[0], buffer, sizeof buffer)) > 0;) id_.append(buffer, n);
    close(id_pipe[0]);
  }
  ~ChildWorker() { end(); }
  ChildWorker(const ChildWorker&) = delete;
  ChildWorker& operator=(const ChildWorker&) = delete;

  const std::string& id() const { return id_; }
  pid_t pid() const { return pid_; }
  // Ends the process and waits for it; its wait status.
  int end() {
    if (!ended_) {
      close(end_pipe_[1]);
      waitpid(pid_, &status_, 0);
      ended_ = true;
    }
    return status_;
  }

 private:
  pid_t pid_ = -1;
  int end_pipe_[2] = {-1, -1};
  std::string id_;
  bool ended_ = false;
  int status_ = -1;
};

SweepOptions quiet_options(const std::string& db) {
  SweepOptions o;
  o.db_path = db;
  return o;
}

std::string write_spec(const TempDir& dir, const json& spec) {
  const std::string file = dir.file("tiny.json");
  std::ofstream(file) << spec.dump(2);
  return file;
}

// Whether any message holds the text.
bool said_any(const std::vector<std::string>& said, const std::string& text) {
  return std::any_of(said.begin(), said.end(), [&](const std::string& s) { return s.find(text) != std::string::npos; });
}

// Attention ranks 2 and 3, no baselines: at epoch 0 (before the late stage) the second is larger
// and less compressed, so dominated in both objectives whatever the losses.
json two_ranks_sweep() {
  json j = tiny_sweep(3);
  j.erase("baselines");
  j["axes"] = {{"set", {{"model.tensorized.attention.ranks", {2, 3}}}}};
  j["objectives"] = "size:min,compression:max";
  return j;
}

}  // namespace

TEST_CASE("a sweep runs every trial once and a re-run resumes without repeating", "[sweep]") {
  TempDir dir;
  const auto spec = parse_sweep_spec(tiny_sweep(2, {0.5, 0.2}));
  auto options = quiet_options(dir.file("r.db"));
  options.max_trials = 2;
  std::vector<std::string> said;  // the sweep reports through the callback, never prints
  options.on_message = [&said](const std::string& message) { said.push_back(message); };
  const auto first = run_sweep(spec, options);
  REQUIRE(said.size() == 5);
  CHECK_THAT(said[0], Contains(": 4 trials, 4 to run, results in " + dir.file("r.db")));
  CHECK_THAT(said[1], Contains("] trial 1: dense") && Contains("(3 more queued)"));
  CHECK_THAT(said[2], Contains("] trial 1 complete in "));
  options.on_message = nullptr;
  CHECK(first.trials == 4);
  CHECK(first.ran == 2);
  CHECK(first.states == std::map<std::string, size_t>{{"complete", 2}, {"queued", 2}});

  options.max_trials = 0;
  const auto second = run_sweep(spec, options);
  CHECK(second.ran == 2);
  CHECK(describe_states(second) == "4 trials: 4 complete");
  const auto rows = read_rows(dir.file("r.db"));
  REQUIRE(rows.size() == 4);
  for (const auto& r : rows) {
    CHECK(r.state == "complete");
    CHECK(r.attempts == 1);
    CHECK(r.epochs == expected_epochs(r, 2));
  }
  // Nothing left: a third run claims nothing and changes nothing.
  CHECK(run_sweep(spec, options).ran == 0);
  CHECK(read_rows(dir.file("r.db"))[3].ended_at == rows[3].ended_at);

  SQLite::Database db(dir.file("r.db"), SQLite::OPEN_READONLY);
  CHECK(db.execAndGet("SELECT COUNT(*) FROM objectives WHERE name IN ('eval_loss', 'size', "
                      "'accuracy', 'compression')").getInt() == 16);
  CHECK(db.execAndGet("SELECT COUNT(*) FROM layer_ranks").getInt() > 0);
  CHECK(db.execAndGet("SELECT json_extract(config, '$.kind') FROM trials WHERE number = 1")
            .getString() == "dense");
  // The objective names a training spec may use are the ones its trials record.
  // Every name a run may record but the data-parallel ones (these trials run on one rank).
  auto expected = recorded_objectives(false);
  expected.erase(std::remove_if(expected.begin(), expected.end(),
                                [](const std::string& name) {
                                  return name == "ranks" || name.rfind("all_reduce_", 0) == 0;
                                }),
                 expected.end());
  CHECK(objective_names(dir.file("r.db")) == expected);
}

TEST_CASE("trials toward other targets share one early stage: recorded as shared, spent once, and each "
          "ends where it ends alone", "[sweep]") {
  TempDir dir;
  // L0 5 lies above any loss these trials reach, so the size gap drives trial 2's late stage.
  json j = tiny_sweep(2);
  j.erase("baselines");
  j["axes"]["targets"] = {{"loss", {0.5, 5.0}}, {"size_ratio", {0.2}}};
  const std::string path = dir.file("s.db");
  auto options = quiet_options(path);
  std::vector<std::string> said;
  options.trials.on_message = [&said](const std::string& message) { said.push_back(message); };
  CHECK(describe_states(run_sweep(parse_sweep_spec(j), options)) == "2 trials: 2 complete");
  CHECK(said_any(said, "trial 2 starts from trial 1's early stage (1 epoch(s)"));
  // The reference: trial 2's target alone, in a database of its own.
  json alone = j;
  alone["axes"]["targets"]["loss"] = {5.0};
  options.db_path = dir.file("alone.db");
  options.trials.on_message = nullptr;
  run_sweep(parse_sweep_spec(alone), options);
  auto read = [](const std::string& db_path, int64_t number) {
    SQLite::Database db(db_path, SQLite::OPEN_READONLY);
    SQLite::Statement q(db, "SELECT e.epoch, COALESCE(e.shared_from, ''), m.value FROM epochs e JOIN trials t "
                            "ON t.id = e.trial_id JOIN epoch_metrics m ON m.trial_id = e.trial_id AND "
                            "m.epoch = e.epoch AND m.name = 'eval_loss' WHERE t.number = ? ORDER BY e.epoch");
    q.bind(1, number);
    std::vector<std::tuple<int64_t, std::string, double>> rows;
    while (q.executeStep()) rows.emplace_back(q.getColumn(0).getInt64(), q.getColumn(1).getString(), q.getColumn(2).getDouble());
    return rows;
  };
  const auto first = read(path, 1), shared = read(path, 2), own = read(dir.file("alone.db"), 1);
  REQUIRE(first.size() == 2);
  REQUIRE(shared.size() == 2);
  REQUIRE(own.size() == 2);
  SQLite::Database db(path, SQLite::OPEN_READONLY);
  CHECK(std::get<1>(first[0]).empty());
  CHECK(std::get<1>(shared[0]) == db.execAndGet("SELECT uid FROM trials WHERE number = 1").getString());
  CHECK(std::get<1>(shared[1]).empty());
  CHECK(std::get<2>(shared[0]) == std::get<2>(first[0]));
  CHECK(std::get<2>(shared[0]) == std::get<2>(own[0]));
  CHECK(std::get<2>(shared[1]) == std::get<2>(own[1]));
  CHECK(std::get<2>(shared[1]) != std::get<2>(first[1]));  // the targets matter
  CHECK(db.execAndGet("SELECT COUNT(*) FROM layer_ranks l JOIN trials t ON t.id = l.trial_id WHERE t.number = 2 "
                      "AND l.epoch = 0").getInt() > 0);
  // Trial 2's training time goes on from the shared stage's; only what it ran itself counts.
  auto elapsed = [&db](const std::string& where) {
    return db.execAndGet("SELECT MAX(m.value) FROM epoch_metrics m JOIN trials t ON t.id = m.trial_id WHERE "
                         "m.name = 'elapsed_s' AND " + where).getDouble();
  };
  const double first_total = elapsed("t.number = 1"), second_total = elapsed("t.number = 2"),
               second_shared = elapsed("t.number = 2 AND m.epoch = 0");
  CHECK(second_shared == elapsed("t.number = 1 AND m.epoch = 0"));
  CHECK(second_total > second_shared);
  {
    auto results = store::ResultsDb::open(path, store::ResultsDb::Mode::ReadOnly);
    const auto s = spent(results, "tiny");
    CHECK(s.epochs == 3);
    CHECK(s.minutes * 60 == Approx(first_total + second_total - second_shared));
  }
  const auto shown = comera::testing::run_cli("runs show 2 --db " + path);
  CHECK(shown.status == 0);
  CHECK_THAT(shown.output, Contains("shared_from") && Contains("trial 1"));
}

TEST_CASE("an early stage is shared only within its database: another beside it, under the same study name, "
          "trains its own", "[sweep]") {
  TempDir dir;
  std::filesystem::create_directories(dir.file("data"));
  for (const char* f : {"train.tsv", "dev_matched.tsv"})
    std::filesystem::copy_file(comera::source_dir() + "/tests/fixtures/mnli/" + f, dir.file(std::string("data/") + f));
  json j = tiny_sweep(2);
  j.erase("baselines");
  j["base"]["data"]["dir"] = dir.file("data");
  j["axes"]["targets"] = {{"loss", {0.5, 5.0}}, {"size_ratio", {0.2}}};
  run_sweep(parse_sweep_spec(j), quiet_options(dir.file("one.db")));
  // The same examples in another order: the same key and counts, another early stage.
  {
    std::ifstream in(dir.file("data/train.tsv"));
    std::string header, line;
    std::getline(in, header);
    std::vector<std::string> lines;
    while (std::getline(in, line)) lines.push_back(line);
    in.close();
    std::ofstream out(dir.file("data/train.tsv"));
    out << header << "\n";
    for (auto it = lines.rbegin(); it != lines.rend(); ++it) out << *it << "\n";
  }
  run_sweep(parse_sweep_spec(j), quiet_options(dir.file("two.db")));
  json alone = j;
  alone["axes"]["targets"]["loss"] = {5.0};
  std::filesystem::create_directories(dir.file("alone"));
  run_sweep(parse_sweep_spec(alone), quiet_options(dir.file("alone/alone.db")));
  auto last_loss = [](const std::string& db_path, int64_t number) {
    SQLite::Database db(db_path, SQLite::OPEN_READONLY);
    SQLite::Statement q(db, "SELECT m.value FROM epoch_metrics m JOIN trials t ON t.id = m.trial_id WHERE "
                            "t.number = ? AND m.name = 'eval_loss' ORDER BY m.epoch DESC LIMIT 1");
    q.bind(1, number);
    REQUIRE(q.executeStep());
    return q.getColumn(0).getDouble();
  };
  CHECK(last_loss(dir.file("one.db"), 2) != last_loss(dir.file("alone/alone.db"), 1));  // the order matters
  CHECK(last_loss(dir.file("two.db"), 2) == last_loss(dir.file("alone/alone.db"), 1));
  SQLite::Database two(dir.file("two.db"), SQLite::OPEN_READONLY);
  CHECK(two.execAndGet("SELECT e.shared_from FROM epochs e JOIN trials t ON t.id = e.trial_id WHERE t.number = 2 "
                       "AND e.epoch = 0").getString() ==
        two.execAndGet("SELECT uid FROM trials WHERE number = 1").getString());
}

TEST_CASE("a grid sweep whose data is missing names the file and queues nothing", "[sweep]") {
  TempDir dir;
  json j = tiny_sweep(1);
  j["base"]["data"]["dir"] = dir.file("nowhere");
  CHECK_THROWS_WITH(run_sweep(parse_sweep_spec(j), quiet_options(dir.file("r.db"))),
                    Contains("nowhere/train.tsv not found") && Contains("data.dir") && Contains("this sweep queued and ran nothing"));
  CHECK_FALSE(std::filesystem::exists(dir.file("r.db")));
}

TEST_CASE("a trial given a dominated early stage is pruned on it without training, and runs on from it on "
          "request", "[sweep]") {
  TempDir dir;
  // Attention ranks 3 are dominated at epoch 0 (larger, less compressed) by ranks 2: trial 3 is
  // pruned there, and trial 4, its early stage shared, is judged on the copy.
  json j = tiny_sweep(2);
  j.erase("baselines");
  j["axes"] = {{"set", {{"model.tensorized.attention.ranks", {2, 3}}}},
               {"targets", {{"loss", {0.5}}, {"size_ratio", {0.5, 0.2}}}}};
  j["objectives"] = "size:min,compression:max";
  j["pruning"] = json::object();
  const auto spec = parse_sweep_spec(j);
  const std::string path = dir.file("p.db");
  auto options = quiet_options(path);
  std::vector<std::string> said;
  options.trials.on_message = [&said](const std::string& message) { said.push_back(message); };
  CHECK(describe_states(run_sweep(spec, options)) == "4 trials: 2 complete, 2 pruned");
  CHECK(said_any(said, "trial 4 starts from trial 3's early stage"));
  auto rows = read_rows(path);
  REQUIRE(rows.size() == 4);
  CHECK(rows[3].state == "pruned");
  CHECK(rows[3].epochs == 1);
  {
    SQLite::Database db(path, SQLite::OPEN_READONLY);
    CHECK_THAT(db.execAndGet("SELECT error FROM trials WHERE number = 4").getString(),
               Contains("dominated at epoch 0 by trials 1, 2"));
    auto results = store::ResultsDb::open(path, store::ResultsDb::Mode::ReadOnly);
    CHECK(spent(results, "tiny").epochs == 4);  // trial 1: 2, trial 2: its late epoch, trial 3: 1, trial 4: none
  }
  options.trials.on_message = nullptr;
  options.resume_pruned = true;
  CHECK(describe_states(run_sweep(spec, options)) == "4 trials: 4 complete");
  rows = read_rows(path);
  CHECK(rows[3].epochs == 2);
  CHECK(rows[3].eval_loss != rows[2].eval_loss);  // its own late stage, toward its own S0
  SQLite::Database db(path, SQLite::OPEN_READONLY);
  CHECK(db.execAndGet("SELECT COUNT(*) FROM epochs e JOIN trials t ON t.id = e.trial_id WHERE t.number = 4 AND "
                      "e.shared_from IS NOT NULL").getInt() == 1);
}

TEST_CASE("a pruning sweep stops a dominated trial at its epoch, records why, keeps it off the front, "
          "and runs it on from its checkpoint on request", "[sweep]") {
  TempDir dir;
  json j = two_ranks_sweep();
  j["pruning"] = json::object();  // from the first epoch (0), no margin
  const auto spec = parse_sweep_spec(j);
  const std::string path = dir.file("p.db");
  auto options = quiet_options(path);
  std::vector<std::string> said;
  options.on_message = [&said](const std::string& message) { said.push_back(message); };
  const auto first = run_sweep(spec, options);
  CHECK(first.states == std::map<std::string, size_t>{{"complete", 1}, {"pruned", 1}});
  CHECK(describe_states(first) == "2 trials: 1 complete, 1 pruned");
  CHECK(said_any(said, "] trial 2 pruned in "));
  auto rows = read_rows(path);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].state == "complete");
  CHECK(rows[0].epochs == 3);
  CHECK(rows[1].state == "pruned");
  CHECK(rows[1].epochs == 1);
  const auto epoch_one_at = [&] {
    SQLite::Database db(path, SQLite::OPEN_READONLY);
    return db.execAndGet("SELECT recorded_at FROM epochs e JOIN trials t ON t.id = e.trial_id WHERE "
                         "t.number = 2 AND e.epoch = 0").getString();
  };
  const std::string pruned_epoch = epoch_one_at();
  {
    SQLite::Database db(path, SQLite::OPEN_READONLY);
    CHECK(db.execAndGet("SELECT COUNT(*) FROM decisions").getInt() == 1);
    CHECK(db.execAndGet("SELECT kind || ' ' || epoch || ' ' || json_extract(detail, '$.dominated_by[0].trial') "
                        "FROM decisions").getString() == "pruned 0 1");
    CHECK_THAT(db.execAndGet("SELECT error FROM trials WHERE number = 2").getString(),
               Contains("dominated at epoch 0 by trial 1"));
  }
  {
    auto db = store::ResultsDb::open(path, store::ResultsDb::Mode::ReadOnly);
    const auto front = pareto::study_front(db, {spec.name, "", {}, {}});
    CHECK(front.values.size() == 1);
    CHECK(front.left_out == std::map<std::string, size_t>{{"pruned", 1}});
    REQUIRE(front.pruned.size() == 1);
    CHECK(front.pruned[0].number == 2);
    CHECK_THAT(front.pruned[0].why, Contains("by trial 1"));
  }
  // Run again: a pruned trial stays pruned.
  options.on_message = nullptr;
  CHECK(run_sweep(spec, options).ran == 0);
  CHECK(read_rows(path)[1].state == "pruned");
  // On request it runs on from its checkpoint to its end, and is not pruned again.
  options.resume_pruned = true;
  const auto resumed = run_sweep(spec, options);
  CHECK(resumed.resumed == 1);
  CHECK(resumed.ran == 1);
  rows = read_rows(path);
  CHECK(rows[1].state == "complete");
  CHECK(rows[1].epochs == 3);
  CHECK(rows[1].attempts == 2);
  CHECK(epoch_one_at() == pruned_epoch);  // resumed, not started again
  SQLite::Database db(path, SQLite::OPEN_READONLY);
  CHECK(db.execAndGet("SELECT group_concat(kind, ',') FROM (SELECT kind FROM decisions ORDER BY id)").getString() ==
        "pruned,resumed");
  const auto shown = comera::testing::run_cli("runs show 2 --db " + path);
  CHECK(shown.status == 0);
  CHECK_THAT(shown.output, Contains("decisions:") && Contains("pruned at epoch 0: dominated at epoch 0 by trial 1") &&
                               Contains("resumed: resumed on request"));
}

TEST_CASE("pruning every N steps stops a dominated trial inside its first epoch, counts the part it ran, "
          "and resumes it from there on request", "[sweep]") {
  TempDir dir;
  // Epochs of two steps, so a check every step falls inside each epoch at its step 1.
  json j = two_ranks_sweep();
  // Late-stage epochs (1 and 2) have checks only when asked.
  const bool late_checks = GENERATE(false, true);
  j["pruning"] = {{"every_steps", 1}, {"late_checks", late_checks}};
  const auto whole_run_checks = late_checks ? std::vector<int64_t>{1, 3, 5} : std::vector<int64_t>{1};
  const auto spec = parse_sweep_spec(j);
  const std::string path = dir.file("p.db");
  auto options = quiet_options(path);
  CHECK(run_sweep(spec, options).states == std::map<std::string, size_t>{{"complete", 1}, {"pruned", 1}});
  const auto steps_checked = [&](int number) {
    SQLite::Database db(path, SQLite::OPEN_READONLY);
    SQLite::Statement q(db, "SELECT DISTINCT c.step FROM checks c JOIN trials t ON t.id = c.trial_id "
                            "WHERE t.number = ? AND c.name = 'size' ORDER BY c.step");
    q.bind(1, number);
    std::vector<int64_t> steps;
    while (q.executeStep()) steps.push_back(q.getColumn(0).getInt64());
    return steps;
  };
  CHECK(steps_checked(1) == whole_run_checks);
  CHECK(steps_checked(2) == std::vector<int64_t>{1});
  {
    SQLite::Database db(path, SQLite::OPEN_READONLY);
    CHECK(db.execAndGet("SELECT e.step || ' ' || m.value FROM epochs e JOIN trials t ON t.id = e.trial_id "
                        "JOIN epoch_metrics m ON m.trial_id = e.trial_id AND m.epoch = e.epoch "
                        "WHERE t.number = 2 AND m.name = 'epoch_fraction'").getString() == "1 0.5");
    CHECK(db.execAndGet("SELECT epoch || ' ' || json_extract(detail, '$.step') FROM decisions").getString() == "0 1");
    CHECK_THAT(db.execAndGet("SELECT error FROM trials WHERE number = 2").getString(),
               Contains("dominated at step 1 (epoch 0) by trial 1"));
  }
  {
    auto db = store::ResultsDb::open(path, store::ResultsDb::Mode::ReadOnly);
    CHECK(spent(db, spec.name).epochs == 3.5);  // trial 2 ran half an epoch
  }
  options.resume_pruned = true;
  CHECK(run_sweep(spec, options).ran == 1);
  const auto rows = read_rows(path);
  CHECK(rows[1].state == "complete");
  CHECK(rows[1].epochs == 3);
  CHECK(steps_checked(2) == whole_run_checks);
  auto db = store::ResultsDb::open(path, store::ResultsDb::Mode::ReadOnly);
  CHECK(spent(db, spec.name).epochs == 6);
}

TEST_CASE("pruning every N steps from a later epoch: no checks before it, where nothing is judged", "[sweep]") {
  TempDir dir;
  json j = two_ranks_sweep();
  j["pruning"] = {{"every_steps", 1}, {"from_epoch", 1}};
  const auto spec = parse_sweep_spec(j);
  const std::string path = dir.file("p.db");
  CHECK(run_sweep(spec, quiet_options(path)).states == std::map<std::string, size_t>{{"complete", 1}, {"pruned", 1}});
  SQLite::Database db(path, SQLite::OPEN_READONLY);
  // Two-step epochs: step 1 is epoch 0's check, steps 3 and 5 those of epochs 1 and 2.
  CHECK(db.execAndGet("SELECT group_concat(step, ',') FROM (SELECT DISTINCT c.step FROM checks c JOIN trials t "
                      "ON t.id = c.trial_id WHERE t.number = 1 ORDER BY c.step)").getString() == "3,5");
  CHECK(db.execAndGet("SELECT epoch || ' ' || json_extract(detail, '$.step') FROM decisions").getString() == "1 3");
}

TEST_CASE("trials of dead or silent workers: re-queued, or failed until --retry-failed", "[sweep]") {
  TempDir dir;
  const auto spec = parse_sweep_spec(tiny_sweep(1));
  const std::string path = dir.file("r.db");
  std::string dead_worker;
  {
    auto db = store::ResultsDb::open(path);
    const auto study = store::create_or_get_study(db, spec.name, spec.source, spec.objectives);
    store::enqueue_trials(db, study, expand_trials(spec));
    // Trial 1: a process of this host that has exited.
    ChildWorker gone;
    gone.end();
    dead_worker = gone.id();
    store::claim_next_trial(db, study.id, dead_worker, current_environment());
    // Trial 2: a worker elsewhere that went silent.
    store::claim_next_trial(db, study.id, "elsewhere:1:1", current_environment());
  }
  {
    SQLite::Database db(path, SQLite::OPEN_READWRITE);
    db.exec("UPDATE trials SET heartbeat_at = '2000-01-01T00:00:00.000Z'");
  }
  auto options = quiet_options(path);
  options.stale_after_s = 60;
  std::string said;
  options.on_message = [&said](const std::string& message) { said += message + "\n"; };
  const auto report = run_sweep(spec, options);
  CHECK_THAT(said, Contains("trial 1 was interrupted (its worker " + dead_worker + " is gone)"));
  CHECK_THAT(said, Contains("1 running trial(s) had no heartbeat for 60 s: marked failed"));
  CHECK(report.requeued == 1);
  CHECK(report.stale == 1);
  CHECK(report.states == std::map<std::string, size_t>{{"complete", 2}, {"failed", 1}});
  auto rows = read_rows(path);
  CHECK(rows[0].state == "complete");
  CHECK(rows[0].attempts == 2);
  CHECK(rows[0].worker != dead_worker);
  CHECK(rows[1].state == "failed");

  options.retry_failed = true;
  const auto retried = run_sweep(spec, options);
  CHECK(retried.retried == 1);
  CHECK(retried.ran == 1);
  rows = read_rows(path);
  CHECK(rows[1].state == "complete");
  CHECK(rows[1].attempts == 2);
  // Heartbeats come every 15 s: a shorter limit would fail live workers elsewhere.
  options.stale_after_s = 59;
  CHECK_THROWS_WITH(run_sweep(spec, options), Contains("--stale-after") && Contains("at least 60"));
}

TEST_CASE("the queue: claims among a shard's ids, single-trial re-queue", "[sweep][store]") {
  TempDir dir;
  auto db = store::ResultsDb::open(dir.file("q.db"));
  const auto study = store::create_or_get_study(db, "q", json::object(), "eval_loss:min");
  const auto ids = store::enqueue_trials(db, study, {{{"i", 1}}, {{"i", 2}}, {{"i", 3}}});
  const auto env = current_environment();
  CHECK_FALSE(store::claim_next_trial_among(db, study.id, {}, "w", env));
  const auto third = store::claim_next_trial_among(db, study.id, {ids[2], ids[0]}, "w", env);
  REQUIRE(third);
  CHECK(third->id == ids[0]);  // lowest number first
  CHECK(store::claim_next_trial_among(db, study.id, {ids[2], ids[0]}, "w", env)->id == ids[2]);
  CHECK_FALSE(store::claim_next_trial_among(db, study.id, {ids[2], ids[0]}, "w", env));
  store::record_epoch(db, ids[2], {0, 1, "early", {{"eval_loss", 1.0}}, "", ""});
  CHECK_FALSE(store::requeue_trial(db, ids[2], store::TrialState::Running, "other"));
  CHECK_FALSE(store::requeue_trial(db, ids[2], store::TrialState::Failed, "w"));
  CHECK(store::requeue_trial(db, ids[2], store::TrialState::Running, "w"));
  CHECK(db.sql().execAndGet("SELECT state FROM trials WHERE id = " + std::to_string(ids[2]))
            .getString() == "queued");
  // Its epochs stay: the trial resumes from its checkpoint, and a rerun epoch replaces its row.
  CHECK(db.sql().execAndGet("SELECT COUNT(*) FROM epochs").getInt() == 1);
}

// Starts a sweep of `spec` on `db` that stops itself once trial 2 (after trial 1 complete) has
// recorded 3 epochs (COMERA_PAUSE_AT), sends `signal` there and returns the exit status.
int interrupt_mid_trial(const TempDir& dir, const std::string& spec, const std::string& db, int signal) {
  const std::vector<std::string> argv = {"env", "COMERA_PAUSE_AT=2:3", comera::testing::cli_path(), "sweep",
                                         spec, "--db", db, "--quiet", "--no-front"};
  const pid_t pid = start_process(argv, dir.file("first.log"), "comera sweep");
  REQUIRE(pid > 0);
  const bool paused = comera::testing::wait_until_stopped(pid);
  if (paused) {
    const auto rows = read_rows(db);
    REQUIRE(rows.size() == 3);
    CHECK(rows[0].state == "complete");
    CHECK(rows[1].state == "running");
    CHECK(rows[1].epochs == 3);
  }
  ::kill(pid, signal);
  ::kill(pid, SIGCONT);  // a stopped process takes SIGTERM only once it runs again
  const int status = comera::testing::wait_cli(pid);
  REQUIRE(paused);
  return status;
}

TEST_CASE("comera sweep killed mid-trial resumes from its checkpoint: nothing lost, nothing twice",
          "[sweep][cli]") {
  TempDir dir;
  const int epochs = 30;
  const std::string spec = write_spec(dir, tiny_sweep(epochs));
  // The same sweep uninterrupted, for the final numbers.
  const std::string whole = dir.file("whole.db");
  REQUIRE(comera::testing::run_cli("sweep " + spec + " --db " + whole + " --quiet --no-front").status == 0);
  const auto reference = read_rows(whole);

  for (const int signal : {SIGKILL, SIGTERM}) {
    INFO("signal " << signal);
    const std::string db = dir.file(signal == SIGKILL ? "k.db" : "t.db");
    const int status = interrupt_mid_trial(dir, spec, db, signal);
    const auto before = read_rows(db);
    if (signal == SIGTERM) {
      CHECK(status == 128 + SIGTERM);
      CHECK(before[1].state == "killed");  // checkpointed and marked, not left running
      CHECK(before[2].state == "queued");  // no new trial started after the signal
    } else {
      REQUIRE(before[1].state == "running");
    }
    REQUIRE(before[1].epochs < expected_epochs(before[1], epochs));

    const auto again = comera::testing::run_cli("sweep " + spec + " --db " + db + " --quiet --no-front");
    INFO(again.output);
    CHECK(again.status == 0);
    CHECK_THAT(again.output, Contains("trial 2 was interrupted") && Contains("trial 2 resumes from"));
    const auto after = read_rows(db);
    REQUIRE(after.size() == 3);  // no duplicate trial
    CHECK(after[0].ended_at == before[0].ended_at);  // the complete one kept, not re-run
    CHECK(after[0].attempts == 1);
    CHECK(after[1].attempts == 2);
    for (size_t i = 0; i < after.size(); ++i) {
      CHECK(after[i].state == "complete");
      CHECK(after[i].epochs == expected_epochs(after[i], epochs));
      // Resumed from the checkpoint, the trial ends exactly where the uninterrupted one did.
      CHECK(after[i].eval_loss == reference[i].eval_loss);
    }
  }
}

TEST_CASE("two comera sweep processes on one database run every trial exactly once",
          "[sweep][cli]") {
  TempDir dir;
  const std::string spec = write_spec(dir, tiny_sweep(4, {0.8, 0.5, 0.3, 0.2}));
  const std::string db = dir.file("c.db");
  const std::vector<std::string> args = {"sweep", spec, "--db", db, "--quiet", "--no-front"};
  const pid_t a = comera::testing::spawn_cli(args, dir.file("a.log"));
  const pid_t b = comera::testing::spawn_cli(args, dir.file("b.log"));
  CHECK(comera::testing::wait_cli(a) == 0);
  CHECK(comera::testing::wait_cli(b) == 0);
  const auto rows = read_rows(db);
  REQUIRE(rows.size() == 6);
  std::set<std::string> workers;
  for (const auto& r : rows) {
    CHECK(r.state == "complete");
    CHECK(r.attempts == 1);
    CHECK(r.epochs == expected_epochs(r, 4));
    workers.insert(r.worker);
  }
  CHECK(workers.size() <= 2);
}

TEST_CASE("shards: deterministic, disjoint and complete, merged back into one study",
          "[sweep][cli]") {
  TempDir dir;
  const std::string spec = write_spec(dir, tiny_sweep(1, {0.8, 0.5, 0.3, 0.2}));
  auto listing = [&](const std::string& shard) {
    const auto r = comera::testing::run_cli("sweep " + spec + " --dry-run --json --shard " + shard);
    REQUIRE(r.status == 0);
    std::set<std::string> configs;
    const auto listed = json::parse(r.output);
    for (const auto& t : listed.at("trials")) configs.insert(t.at("config").dump());
    return configs;
  };
  const auto all = listing("1/1");
  CHECK(all.size() == 6);
  std::set<std::string> joined;
  size_t total = 0;
  for (const char* shard : {"1/3", "2/3", "3/3"}) {
    const auto part = listing(shard);
    CHECK(part.size() == 2);
    total += part.size();
    joined.insert(part.begin(), part.end());
  }
  CHECK(total == all.size());  // disjoint
  CHECK(joined == all);        // complete
  CHECK(listing("2/3") == listing("2/3"));  // the same in every process

  // Two "machines", one shard each, merged.
  for (const char* shard : {"1/2", "2/2"}) {
    const auto r = comera::testing::run_cli("sweep " + spec + " --quiet --no-front --shard " + shard +
                                            " --db " + dir.file(std::string("s") + shard[0] + ".db"));
    INFO(r.output);
    CHECK(r.status == 0);
    CHECK(read_rows(dir.file(std::string("s") + shard[0] + ".db")).size() == 3);
  }
  const auto merged = comera::testing::run_cli("merge " + dir.file("s1.db") + " " + dir.file("s2.db") +
                                               " -o " + dir.file("m.db"));
  INFO(merged.output);
  CHECK(merged.status == 0);
  const auto rows = read_rows(dir.file("m.db"));
  CHECK(rows.size() == 6);
  for (const auto& r : rows) CHECK(r.state == "complete");
  // Running the whole sweep on the merged file finds nothing left to do.
  const auto rerun = comera::testing::run_cli("sweep " + spec + " --quiet --db " + dir.file("m.db"));
  CHECK_THAT(rerun.output, Contains("0 to run") && Contains("6 trials: 6 complete; ran 0"));
}

TEST_CASE("step-measuring sweeps record time, memory and size per batch size", "[sweep]") {
  TempDir dir;
  json j = tiny_sweep(2);
  j["measure"] = "step";
  j["step"] = {{"length", 8}, {"warmup", 0}, {"repeats", 1}};
  j["overrides"] = {{"training.late_stage", nullptr}};
  j["baselines"] = {"dense"};
  j["axes"] = {{"set", {{"training.batch_size", {1, 4}}}}};
  const auto report = run_sweep(parse_sweep_spec(j), quiet_options(dir.file("r.db")));
  CHECK(describe_states(report) == "4 trials: 4 complete");

  SQLite::Database db(dir.file("r.db"), SQLite::OPEN_READONLY);
  // The objective names a step spec may use are the ones its trials record.
  CHECK(objective_names(dir.file("r.db")) == recorded_objectives(true));
  auto objective = [&](const std::string& kind, int batch, const std::string& name) {
    SQLite::Statement q(db, "SELECT o.value FROM objectives o JOIN trials t ON t.id = o.trial_id "
                            "WHERE json_extract(t.config, '$.kind') = ? AND "
                            "json_extract(t.config, '$.experiment.training.batch_size') = ? AND "
                            "o.name = ?");
    q.bind(1, kind), q.bind(2, batch), q.bind(3, name);
    REQUIRE(q.executeStep());
    return q.getColumn(0).getDouble();
  };
  for (const std::string kind : {"dense", "early"})
    for (int batch : {1, 4}) {
      INFO(kind << " batch " << batch);
      CHECK(objective(kind, batch, "step_time_ms") > 0);
      CHECK(objective(kind, batch, "size") == objective(kind, 1, "size"));
      CHECK(objective(kind, batch, "size_mb") == Approx(objective(kind, batch, "size") * 4e-6));
    }
  // The dense trial's size over the tensorized one's is the tensorized trial's compression.
  CHECK(objective("early", 1, "compression") ==
        Approx(objective("dense", 1, "size") / objective("early", 1, "size")));
  CHECK(objective("dense", 1, "size") > 30522 * 8);  // the dense word embedding alone
  // Four sequences hold more activations than one; the dense model more than the tensorized.
  CHECK(objective("dense", 4, "peak_tensor_mb") > objective("dense", 1, "peak_tensor_mb"));
  CHECK(objective("dense", 1, "peak_tensor_mb") > objective("early", 1, "peak_tensor_mb"));
}

TEST_CASE("a live worker of this host keeps its trial whatever its heartbeat; a reused pid does "
          "not",
          "[sweep]") {
  TempDir dir;
  const auto spec = parse_sweep_spec(tiny_sweep(1));
  const std::string path = dir.file("r.db");
  ChildWorker worker;
  const std::string live = worker.id();
  // The same pid, but a process that started at another time: the pid was reused.
  const std::string reused = store::host_name() + ":" + std::to_string(worker.pid()) + ":1";
  {
    auto db = store::ResultsDb::open(path);
    const auto study = store::create_or_get_study(db, spec.name, spec.source, spec.objectives);
    store::enqueue_trials(db, study, expand_trials(spec));
    store::claim_next_trial(db, study.id, live, current_environment());
    store::claim_next_trial(db, study.id, reused, current_environment());
  }
  {
    SQLite::Database db(path, SQLite::OPEN_READWRITE);
    db.exec("UPDATE trials SET heartbeat_at = '2000-01-01T00:00:00.000Z'");
  }
  auto options = quiet_options(path);
  options.stale_after_s = 60;
  options.retry_failed = true;
  std::string said;
  options.on_message = [&said](const std::string& message) { said += message + "\n"; };
  const auto report = run_sweep(spec, options);
  INFO(said);
  CHECK(report.stale == 0);
  CHECK(report.retried == 0);
  CHECK_THAT(said, Contains("trial 2 was interrupted (its worker " + reused + " is gone)"));
  auto rows = read_rows(path);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].state == "running");  // left to its live worker, not failed, not run twice
  CHECK(rows[0].worker == live);
  CHECK(rows[0].attempts == 1);
  CHECK(rows[1].state == "complete");
  CHECK(rows[2].state == "complete");

  // The worker ends without finishing: the next sweep runs its trial again.
  CHECK(worker.end() == 0);
  const auto after = run_sweep(spec, quiet_options(path));
  CHECK(after.requeued == 1);
  rows = read_rows(path);
  CHECK(rows[0].state == "complete");
  CHECK(rows[0].attempts == 2);
}

TEST_CASE("a study made with an unknown objective by older code takes the spec's objectives "
          "while none of its trials is complete",
          "[sweep]") {
  TempDir dir;
  const auto spec = parse_sweep_spec(tiny_sweep(1));
  const std::string path = dir.file("r.db");
  {
    auto db = store::ResultsDb::open(path);
    const auto study = store::create_or_get_study(db, spec.name, spec.source, "eval_los:min");
    const auto ids = store::enqueue_trials(db, study, expand_trials(spec));
    store::claim_next_trial(db, study.id, "elsewhere:1", current_environment());
    store::finish_trial(db, ids[0], "elsewhere:1", store::TrialState::Failed, {},
                        "trial 1 of study 'tiny' completed without objective 'eval_los'");
  }
  auto options = quiet_options(path);
  options.retry_failed = true;
  options.max_trials = 1;
  std::string said;
  options.on_message = [&said](const std::string& message) { said += message + "\n"; };
  const auto report = run_sweep(spec, options);
  CHECK_THAT(said, Contains("'eval_los:min'") && Contains("'" + spec.objectives + "'"));
  CHECK(report.retried == 1);
  CHECK(report.ran == 1);
  CHECK(read_rows(path)[0].state == "complete");
  {
    SQLite::Database db(path, SQLite::OPEN_READONLY);
    CHECK(db.execAndGet("SELECT objectives FROM studies").getString() == spec.objectives);
  }
  // With a complete trial the objectives are settled: another list is refused, naming the fix.
  json other = tiny_sweep(1);
  other["objectives"] = "accuracy:max";
  CHECK_THROWS_WITH(run_sweep(parse_sweep_spec(other), quiet_options(path)),
                    Contains("study 'tiny'") && Contains(path) && Contains("accuracy:max") &&
                        Contains("\"name\""));
}

TEST_CASE("comera sweep --dry-run refuses the flags the run would refuse", "[sweep][cli]") {
  TempDir dir;
  const std::string spec = write_spec(dir, tiny_sweep(1));
  auto fails = [&](const std::string& flags) {
    const auto r = comera::testing::run_cli("sweep " + spec + " --dry-run " + flags);
    INFO(r.output);
    CHECK(r.status == 1);
    return r.output;
  };
  CHECK_THAT(fails("--stale-after 10"), Contains("--stale-after") && Contains("at least 60") && !Contains("dense"));
  CHECK_THAT(fails("--propose 2"), Contains("--propose") && Contains("only an adaptive sweep"));
  CHECK_THAT(fails("--propose -1"), Contains("--propose -1"));
  CHECK_THAT(fails("--device cuda:99"), Contains("device cuda:99"));
  CHECK_THAT(fails("--report " + spec), Contains("--report") && Contains(spec));
  CHECK_THAT(fails("--plot " + dir.file("")), Contains("--plot"));
  // Nothing the trials read or keep: their data, the study's checkpoints; nor one output twice.
  const auto data = comera::source_dir() + "/tests/fixtures/mnli/";
  CHECK_THAT(fails("--plot " + data + "train.tsv"), Contains("is inside " + data));
  CHECK_THAT(fails("--report " + dir.file("checkpoints/tiny/r.html") + " --db " + dir.file("r.db")),
             Contains("a folder this command reads"));
  CHECK_THAT(fails("--plot " + dir.file("x") + " --report " + dir.file("x")), Contains("name the same file"));
  CHECK(comera::testing::run_cli("sweep " + spec + " --dry-run --stale-after 60").status == 0);
}

TEST_CASE("comera sweep --dry-run names the trials that start from an early stage another trains, and the "
          "trial-epochs to train", "[sweep][cli]") {
  TempDir dir;
  // Dense (2 epochs), the early stage alone (1, its own schedule), and two late trials (2 each)
  // on one early stage: 7 trial-epochs, 1 of them shared.
  const auto r = comera::testing::run_cli("sweep " + write_spec(dir, tiny_sweep(2, {0.5, 0.2})) + " --dry-run");
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.output, Contains("4 trials; 6 trial-epochs to train (1 more shared from early stages trained once)"));
  CHECK_THAT(r.output, Contains("early stage"));
  CHECK_THAT(r.output, Contains("from 3"));
  CHECK_THAT(r.output, !Contains("from 1") && !Contains("from 2") && !Contains("from 4"));

  const auto j = comera::testing::run_cli("sweep " + dir.file("tiny.json") + " --dry-run --json");
  INFO(j.output);
  REQUIRE(j.status == 0);
  const auto listing = json::parse(j.output);
  CHECK(listing.at("trial_epochs") == 6);
  CHECK(listing.at("shared_epochs") == 1);
  const auto& trials = listing.at("trials");
  REQUIRE(trials.size() == 4);
  const std::vector<int> own = {2, 1, 2, 1};
  for (size_t i = 0; i < trials.size(); ++i) {
    CHECK(trials[i].at("position") == i + 1);
    CHECK(trials[i].at("trial_epochs") == own[i]);
    CHECK(trials[i].contains("early_stage_from") == (i == 3));
  }
  CHECK(trials[3].value("early_stage_from", 0) == 3);
}

TEST_CASE("comera sweep refuses a plot over the spec's base experiment file", "[sweep][cli]") {
  TempDir dir;
  auto spec_json = tiny_sweep(1);
  const json base = spec_json["base"];
  std::ofstream(dir.file("base.json")) << base.dump(2);
  spec_json["base"] = "base.json";
  const std::string spec = write_spec(dir, spec_json);
  const auto r = comera::testing::run_cli("sweep " + spec + " --db " + dir.file("r.db") +
                                          " --quiet --plot " + dir.file("sub/../base.json"));
  INFO(r.output);
  CHECK(r.status == 1);
  CHECK_THAT(r.output, Contains("--plot") && Contains("base.json") && !Contains("trial 1"));
  CHECK(json::parse(std::ifstream(dir.file("base.json"))) == base);
}

TEST_CASE("comera sweep --plot writes the front's plot also with --no-front", "[sweep][cli][gnuplot]") {
  REQUIRE(std::system("command -v gnuplot >/dev/null 2>&1") == 0);  // scripts/setup.sh installs it
  TempDir dir;
  const std::string spec = write_spec(dir, tiny_sweep(1));
  const std::string plot = dir.file("front.png");
  const auto r = comera::testing::run_cli("sweep " + spec + " --db " + dir.file("r.db") +
                                          " --quiet --no-front --plot " + plot);
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK_THAT(r.output, Contains("wrote " + plot) && !Contains("Pareto front"));
  std::ifstream png(plot, std::ios::binary);
  char magic[4] = {};
  png.read(magic, 4);
  CHECK(std::string(magic + 1, 3) == "PNG");
}

TEST_CASE("comera sweep refuses a plot over its database before any trial", "[sweep][cli]") {
  TempDir dir;
  const std::string spec = write_spec(dir, tiny_sweep(1));
  const std::string db = dir.file("r.db");
  // The plot is checked before the database exists, by path; then by identity (a hard link).
  for (const std::string& plot : {dir.file("sub/../r.db"), dir.file("alias.db")}) {
    const auto r =
        comera::testing::run_cli("sweep " + spec + " --db " + db + " --quiet --plot " + plot);
    INFO(r.output);
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("--plot") && Contains(plot) && !Contains("wrote"));
    if (!std::filesystem::exists(db)) {
      store::ResultsDb::open(db);
      std::filesystem::create_hard_link(db, dir.file("alias.db"));
    }
    CHECK(read_rows(db).empty());
  }
}

TEST_CASE("comera sweep refuses a read-only database before any trial", "[sweep][cli][readonly]") {
  TempDir dir;
  const std::string spec = write_spec(dir, tiny_sweep(1));
  const std::string db = dir.file("r.db");
  store::ResultsDb::open(db);
  const auto r = comera::testing::run_cli_read_only(db, "sweep " + spec + " --db " + db + " --quiet");
  REQUIRE(r);
  INFO(r->output);
  CHECK(r->status == 1);
  CHECK_THAT(r->output, Contains("'" + db + "'") && Contains("read-only") && !Contains("trial 1"));
  CHECK(read_rows(db).empty());
}

TEST_CASE("scripts/slurm_sweep.sh: the array's tasks and the merge give the single-process sweep",
          "[sweep][cli]") {
  TempDir dir;
  const std::string spec = write_spec(dir, tiny_sweep(2, {0.8, 0.5, 0.2}));
  const std::string whole = dir.file("whole.db");
  REQUIRE(comera::testing::run_cli("sweep " + spec + " --db " + whole + " --quiet --no-front").status == 0);

  // What Slurm would run: each array task with its SLURM_ARRAY_TASK_ID, then the merge job.
  const std::string script = comera::source_dir() + "/scripts/slurm_sweep.sh";
  const std::string env = "COMERA=" + comera::testing::cli_path() + " ";
  const std::string common = " " + spec + " --tasks 3 --db-dir " + dir.file("shards");
  auto sh = [](const std::string& command) {
    return comera::run_process({"/bin/sh", "-c", command}, "slurm_sweep.sh", comera::ErrorOutput::Merge);
  };
  for (int i = 0; i < 3; ++i) {
    const auto task = sh("SLURM_ARRAY_TASK_ID=" + std::to_string(i) + " " + env + script + " --task" + common);
    INFO(task.output);
    REQUIRE(task.status == 0);
    CHECK_THAT(task.output, Contains("shard " + std::to_string(i + 1) + "/3"));
  }
  const auto merged = sh(env + script + " --merge" + common);
  INFO(merged.output);
  REQUIRE(merged.status == 0);
  CHECK_THAT(merged.output, Contains("Pareto front"));

  // Every trial of the single-process sweep, once, with the same result; each shard holds a third.
  auto by_config = [](const std::string& path) {
    SQLite::Database db(path, SQLite::OPEN_READONLY);
    SQLite::Statement q(db, "SELECT t.config_hash, o.value FROM trials t JOIN objectives o ON o.trial_id = t.id "
                            "AND o.name = 'eval_loss' WHERE t.state = 'complete'");
    std::map<std::string, double> out;
    while (q.executeStep()) out.emplace(q.getColumn(0).getString(), q.getColumn(1).getDouble());
    return out;
  };
  const auto reference = by_config(whole);
  REQUIRE(reference.size() == 5);  // dense, early, three targets
  CHECK(by_config(dir.file("shards") + "/tiny.db") == reference);
  size_t in_shards = 0;
  for (int i = 0; i < 3; ++i) {
    const auto shard = by_config(dir.file("shards") + "/tiny." + std::to_string(i) + ".db");
    CHECK((shard.size() == 1 || shard.size() == 2));
    in_shards += shard.size();
  }
  CHECK(in_shards == reference.size());

  // Without Slurm's variable, a task says what is missing; a task past the array is refused.
  const auto no_id = sh(env + script + " --task" + common);
  CHECK(no_id.status != 0);
  CHECK_THAT(no_id.output, Contains("SLURM_ARRAY_TASK_ID"));
  const auto past = sh("SLURM_ARRAY_TASK_ID=3 " + env + script + " --task" + common);
  CHECK(past.status != 0);
  CHECK_THAT(past.output, Contains("task 3 of 3 does not exist"));
}
