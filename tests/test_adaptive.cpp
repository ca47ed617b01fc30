// Adaptive sweeps on tiny trials: the search space read from a spec and a trial's point read back
// from its labels; proposals recorded with their reasons until the budget (in trials or epochs)
// is spent; an interrupted sweep proposes what the uninterrupted one did (compared with a second
// database run straight through); two processes on one database propose distinct trials; rounds
// across hosts through scripts/slurm_sweep.sh. Checks read the database through plain SQL.
#include "core/util/error.h"
#include "core/util/process.h"
#include "core/util/source_dir.h"
#include "search/store/decisions.h"
#include "search/store/objectives.h"
#include "search/store/trials.h"
#include "search/sweep/adaptive.h"
#include "search/sweep/sweep_runner.h"
#include "search/sweep/trial_expansion.h"
#include "tests/support/catch.h"
#include "tests/support/cli_process.h"
#include "tests/support/temp_dir.h"
#include "tests/support/tiny_sweep.h"

#include <SQLiteCpp/Column.h>
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

using namespace comera;
using namespace comera::sweep;
using Catch::Matchers::Contains;
using comera::testing::TempDir;
using nlohmann::json;

namespace {

// Targets as ranges and an integer rank cap, sampled adaptively.
json adaptive_spec(json budget, int epochs = 2, int64_t initial = 2) {
  json j = comera::testing::tiny_sweep(epochs);
  j.erase("baselines");
  j["axes"] = {{"targets", {{"loss", {{"min", 0.5}, {"max", 1.5}}}, {"size_ratio", {{"min", 0.1}, {"max", 1.0}, {"log", true}}}}},
               {"rank_cap", {{"min", 1}, {"max", 2}}}};
  j["sampling"] = {{"method", "adaptive"}, {"budget", budget}, {"seed", 7}, {"initial", initial}};
  return j;
}

struct Proposed {
  int64_t number;
  std::string state, point, method, reason;
};

std::vector<Proposed> proposals(const std::string& path) {
  SQLite::Database db(path, SQLite::OPEN_READONLY, 5000);
  SQLite::Statement q(db, "SELECT t.number, t.state, json_extract(t.config, '$.point'), "
                          "json_extract(d.detail, '$.method'), json_extract(d.detail, '$.reason') "
                          "FROM trials t JOIN decisions d ON d.trial_id = t.id AND d.kind = 'proposed' "
                          "ORDER BY t.number");
  std::vector<Proposed> out;
  while (q.executeStep())
    out.push_back({q.getColumn(0).getInt64(), q.getColumn(1).getString(), q.getColumn(2).getString(),
                   q.getColumn(3).getString(), q.getColumn(4).getString()});
  return out;
}

SweepOptions quiet(const std::string& db) {
  SweepOptions o;
  o.db_path = db;
  return o;
}

}  // namespace

TEST_CASE("an adaptive spec's space, and a point's trial read back into the space", "[adaptive]") {
  const auto spec = parse_sweep_spec(adaptive_spec({{"trials", 4}}));
  const auto space = search_space(spec);
  REQUIRE(space.size() == 3);
  CHECK(space[0].name == "rank_cap");
  CHECK(space[0].kind == propose::AxisKind::Integer);
  CHECK(space[1].name == "targets.loss");
  CHECK(space[1].kind == propose::AxisKind::Real);
  CHECK(space[2].log);
  // Adaptive sweeps expand to their baselines only (none here).
  CHECK(expand_trials(spec).empty());
  std::vector<Choice> choices;
  const std::vector<double> x = {1.6, 0.987654, 0.3};
  for (size_t i = 0; i < x.size(); ++i) choices.push_back(range_choice(spec.axes[i + 1], x[i]));
  const auto trial = point_trial(spec, choices);
  CHECK(trial["point"]["rank_cap"] == 2);  // rounded to a whole cap
  CHECK(trial["point"]["loss_target"] == 0.9877);
  CHECK(trial["experiment"]["training"]["late_stage"]["loss_target"] == 0.9877);
  CHECK(trial["experiment"]["training"]["late_stage"]["size_ratio"] == 0.3);
  const auto back = point_values(spec, trial);
  REQUIRE(back);
  CHECK(*back == propose::Values{2, 0.9877, 0.3});
  // A trial without the labels is no point of the space.
  CHECK_FALSE(point_values(spec, json{{"point", {{"seed", 1}}}}));
}

TEST_CASE("adaptive sampling specs: what they need and what they refuse", "[adaptive]") {
  auto with_sampling = [](json sampling) {
    json j = adaptive_spec({{"trials", 2}});
    j["sampling"] = sampling;
    return j;
  };
  CHECK_THROWS_WITH(parse_sweep_spec(with_sampling({{"method", "adaptive"}})), Contains("sampling.budget"));
  CHECK_THROWS_WITH(parse_sweep_spec(with_sampling({{"method", "adaptive"}, {"budget", json::object()}})),
                    Contains("give what the sweep may spend"));
  CHECK_THROWS_WITH(parse_sweep_spec(with_sampling({{"method", "adaptive"}, {"budget", {{"trials", 2}}}, {"sampler", "bayes"}})),
                    Contains("sampling.sampler") && Contains("gp-ehvi"));
  CHECK_THROWS_WITH(parse_sweep_spec(with_sampling({{"method", "adaptive"}, {"budget", {{"trials", 2}}}, {"trials", 5}})),
                    Contains("adaptive sampling takes none"));
  CHECK_THROWS_WITH(parse_sweep_spec(with_sampling({{"method", "grid"}, {"budget", {{"trials", 2}}}})),
                    Contains("sampling.budget") && Contains("only read with"));
  json seeds = adaptive_spec({{"trials", 2}});
  seeds["axes"]["seeds"] = {1, 2};
  CHECK_THROWS_WITH(parse_sweep_spec(seeds), Contains("axes.seeds") && Contains("one seed"));
  json grid = adaptive_spec({{"trials", 2}});
  grid.erase("sampling");
  CHECK_THROWS_WITH(parse_sweep_spec(grid), Contains("a range needs random or adaptive sampling"));
  json fractional = adaptive_spec({{"trials", 2}});
  fractional["axes"]["rank_cap"] = {{"min", 1.5}, {"max", 4}};
  CHECK_THROWS_WITH(parse_sweep_spec(fractional), Contains("rank_cap") && Contains("whole"));
  TempDir dir;
  auto propose = quiet(dir.file("s.db"));
  propose.propose_only = 2;
  CHECK_THROWS_WITH(run_sweep(parse_sweep_spec(comera::testing::tiny_sweep(2)), propose),
                    Contains("--propose: only an adaptive sweep"));
  propose.shard = {1, 2};
  CHECK_THROWS_WITH(run_sweep(parse_sweep_spec(adaptive_spec({{"trials", 2}})), propose),
                    Contains("propose without --shard"));
  // Its points come later, one at a time, but its space is checked before any trial runs: a
  // misspelt path, or a value valid at one end of its range only, is named and nothing written.
  json misspelt = adaptive_spec({{"trials", 2}});
  misspelt["axes"]["set"] = {{"model.tensorized.attention.rnaks", {{"min", 2}, {"max", 3}, {"integer", true}}}};
  CHECK_THROWS_WITH(run_sweep(parse_sweep_spec(misspelt), quiet(dir.file("m.db"))),
                    Contains("attention.rnaks: unknown key"));
  json too_high = adaptive_spec({{"trials", 2}});
  too_high["axes"]["set"] = {{"model.dropout", {{"min", 0}, {"max", 1.5}}}};
  CHECK_THROWS_WITH(run_sweep(parse_sweep_spec(too_high), quiet(dir.file("h.db"))),
                    Contains("\"model.dropout\":1.5") && Contains("model.dropout: 1.5 is out of range"));
  CHECK_FALSE(std::filesystem::exists(dir.file("m.db")));
  CHECK_FALSE(std::filesystem::exists(dir.file("h.db")));
}

TEST_CASE("start points given in an adaptive spec are proposed first, in order, then the design and the "
          "model; a bad one is named before any trial", "[adaptive]") {
  auto with_start = [](json start) {
    json j = adaptive_spec({{"trials", 3}}, 2, 1);
    j["sampling"]["start"] = start;
    return j;
  };
  const json big = {{"targets.loss", 0.5}, {"targets.size_ratio", 1}, {"rank_cap", 2}};
  const json small = {{"targets.loss", 1.5}, {"targets.size_ratio", 0.1}, {"rank_cap", 1}};
  TempDir dir;
  const std::string path = dir.file("s.db");
  CHECK(run_sweep(parse_sweep_spec(with_start({big, small})), quiet(path)).ran == 3);
  const auto p = proposals(path);
  REQUIRE(p.size() == 3);
  CHECK(p[0].method == "start");
  CHECK_THAT(p[0].reason, Contains("given in the spec (sampling.start, 1 of 2)"));
  CHECK(json::parse(p[0].point) == json({{"loss_target", 0.5}, {"size_ratio", 1}, {"rank_cap", 2}, {"seed", 1}}));
  CHECK(json::parse(p[1].point) == json({{"loss_target", 1.5}, {"size_ratio", 0.1}, {"rank_cap", 1}, {"seed", 1}}));
  CHECK(p[1].method == "start");
  // Start points fill the initial design (1 point here): the model proposes next.
  CHECK(p[2].method == "gp-ehvi");

  auto refused = [&](json start) {
    try {
      parse_sweep_spec(with_start(start));
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK_THAT(refused(big), Contains("sampling.start: expected a list of points"));
  CHECK_THAT(refused({{{"targets.los", 1}}}),
             Contains("sampling.start[0].targets.los: not an axis of this sweep (the axes: rank_cap, targets.loss, "));
  CHECK_THAT(refused({{{"targets.loss", 1}, {"rank_cap", 1}}}),
             Contains("sampling.start[0]: targets.size_ratio is missing"));
  json outside = big;
  outside["targets.loss"] = 2;
  CHECK_THAT(refused({big, outside}), Contains("sampling.start[1].targets.loss: 2 is not in its range [0.5, 1.5]"));
  json fraction = big;
  fraction["rank_cap"] = 1.5;
  CHECK_THAT(refused({fraction}), Contains("rank_cap: 1.5 is not in its range [1, 2] of whole numbers"));
  CHECK_THAT(refused({big, big}), Contains("sampling.start[1]: repeats an earlier start point"));
  // A listed axis takes one of its values.
  json listed = with_start({big});
  listed["axes"]["set"] = {{"model.dropout", {0.1, 0.2}}};
  json with_dropout = big;
  with_dropout["set.model.dropout"] = 0.2;
  listed["sampling"]["start"] = {with_dropout};
  CHECK(parse_sweep_spec(listed).sampling.start.at(0) == std::vector<double>{1, 2, 0.5, 1});  // set, rank_cap, targets
  with_dropout["set.model.dropout"] = 0.3;
  listed["sampling"]["start"] = {with_dropout};
  CHECK_THROWS_WITH(parse_sweep_spec(listed), Contains("sampling.start[0].set.model.dropout: 0.3 is not one of its values (0.1, 0.2)"));
  json grid = with_start({big});
  grid["sampling"] = {{"method", "grid"}, {"start", {big}}};
  CHECK_THROWS_WITH(parse_sweep_spec(grid), Contains("sampling.start: only read with"));
}

TEST_CASE("an adaptive sweep proposes, records why and runs trials until its budget is spent, and an "
          "interrupted one proposes what the uninterrupted one did", "[adaptive]") {
  TempDir dir;
  const auto spec = parse_sweep_spec(adaptive_spec({{"trials", 4}}));
  const std::string straight = dir.file("straight.db");
  std::vector<std::string> said;
  auto options = quiet(straight);
  options.on_message = [&said](const std::string& m) { said.push_back(m); };
  const auto report = run_sweep(spec, options);
  CHECK(report.ran == 4);
  CHECK(describe_states(report) == "4 trials: 4 complete");
  const auto p = proposals(straight);
  REQUIRE(p.size() == 4);
  std::set<std::string> points;
  for (size_t i = 0; i < p.size(); ++i) {
    CHECK(p[i].number == static_cast<int64_t>(i + 1));
    CHECK(p[i].state == "complete");
    points.insert(p[i].point);
  }
  CHECK(points.size() == 4);
  // The initial design, then the model.
  CHECK(p[0].method == "random");
  CHECK_THAT(p[0].reason, Contains("initial Latin hypercube design, 1 of 2"));
  CHECK(p[2].method == "gp-ehvi");
  CHECK_THAT(p[2].reason, Contains("expected HV gain") && Contains("trial "));
  CHECK(std::any_of(said.begin(), said.end(), [](const std::string& m) {
    return m.find("budget spent: 4 trials proposed, the budget's 4") != std::string::npos;
  }));
  // Run again: the budget is spent, nothing more is proposed.
  options.on_message = nullptr;
  CHECK(run_sweep(spec, options).ran == 0);
  CHECK(proposals(straight).size() == 4);

  // The same sweep stopped after each trial and run again each time proposes the same points.
  const std::string stopped = dir.file("stopped.db");
  auto step = quiet(stopped);
  step.max_trials = 1;
  for (int i = 0; i < 6; ++i) run_sweep(spec, step);
  const auto q = proposals(stopped);
  REQUIRE(q.size() == 4);
  for (size_t i = 0; i < 4; ++i) {
    CHECK(q[i].point == p[i].point);
    CHECK(q[i].reason == p[i].reason);
  }
}

TEST_CASE("an adaptive sweep whose trials all fail stops after a few, naming the cause; one without its data "
          "queues nothing", "[adaptive]") {
  TempDir dir;
  // Two classes for data of three: each trial fails as its trainer is built, recording no epoch,
  // so an epoch budget is never spent.
  auto failing = adaptive_spec({{"epochs", 4}});
  failing["base"]["model"]["classes"] = 2;
  const std::string path = dir.file("f.db");
  CHECK_THROWS_WITH(run_sweep(parse_sweep_spec(failing), quiet(path)),
                    Contains("3 trials of sweep tiny failed in a row") && Contains("model.classes") &&
                        Contains("--retry-failed"));
  auto db = store::ResultsDb::open(path, store::ResultsDb::Mode::ReadOnly);
  CHECK(store::list_trials(db, "tiny").size() == 3);

  auto no_data = adaptive_spec({{"epochs", 4}});
  no_data["base"]["data"]["dir"] = dir.file("missing");
  CHECK_THROWS_WITH(run_sweep(parse_sweep_spec(no_data), quiet(dir.file("n.db"))),
                    Contains("missing/train.tsv not found") && Contains("this sweep queued and ran nothing"));
  CHECK_FALSE(std::filesystem::exists(dir.file("n.db")));
}

TEST_CASE("what a proposal learns from: complete trials' final values, pruned ones' values when "
          "stopped, failed ones as holes, queued ones as pending", "[adaptive]") {
  TempDir dir;
  const auto spec = parse_sweep_spec(adaptive_spec({{"trials", 4}}));
  const std::string path = dir.file("h.db");
  run_sweep(spec, quiet(path));
  const auto objectives = store::parse_objectives(spec.objectives);
  REQUIRE(objectives.size() == 2);
  auto db = store::ResultsDb::open(path);
  const auto trials = store::list_trials(db, spec.name);
  REQUIRE(trials.size() == 4);
  // Trial 2 pruned at epoch 0 with hand values, trial 3 failed, trial 4 back in the queue.
  db.write([&] {
    store::Decision d;
    d.kind = store::DecisionKind::Pruned;
    d.epoch = 0;
    d.detail = {{"reason", "by hand"}, {"values", {{objectives[0].name, 0.25}, {objectives[1].name, 7.5}}}};
    store::write_decision(db.sql(), trials[1].id, d);
    db.sql().exec("UPDATE trials SET state = 'pruned' WHERE number = 2");
    db.sql().exec("UPDATE trials SET state = 'failed' WHERE number = 3");
    db.sql().exec("UPDATE trials SET state = 'queued' WHERE number = 4");
  });
  const auto complete = store::read_objectives(db.sql(), trials[0].id);
  const auto h = study_history(db, spec.name, spec, objectives);
  REQUIRE(h.done.size() == 3);
  REQUIRE(h.pending.size() == 1);
  CHECK(h.done[0].name == "trial 1");
  CHECK(h.done[0].y[0] == complete.at(objectives[0].name));
  CHECK(h.done[0].y[1] == complete.at(objectives[1].name));
  CHECK(h.done[1].name == "trial 2");
  CHECK(h.done[1].y == pareto::Point{0.25, 7.5});
  CHECK(h.done[2].name == "trial 3");
  CHECK(std::isnan(h.done[2].y[0]));
  CHECK(std::isnan(h.done[2].y[1]));
  CHECK(h.pending[0] == *point_values(spec, trials[3].config));
}

TEST_CASE("an epoch budget counts every trial's recorded epochs", "[adaptive]") {
  TempDir dir;
  // Two epochs a trial: after two trials 4 < 5 epochs, so a third is proposed. It keeps a rank
  // cap already trained (only L0 and S0 differ), so it starts from that trial's early stage and
  // runs one epoch: 5 >= 5, recorded as 6 epochs of which one shared.
  const auto spec = parse_sweep_spec(adaptive_spec({{"epochs", 5}}));
  const auto report = run_sweep(spec, quiet(dir.file("e.db")));
  CHECK(report.ran == 3);
  const auto p = proposals(dir.file("e.db"));
  REQUIRE(p.size() == 3);
  CHECK_THAT(p[2].reason, Contains("'s trained early stage (costs 0.5 of a trial)"));
  auto db = store::ResultsDb::open(dir.file("e.db"), store::ResultsDb::Mode::ReadOnly);
  CHECK(db.sql().execAndGet("SELECT COUNT(*) FROM epochs").getInt() == 6);
  CHECK(db.sql().execAndGet("SELECT COUNT(*) FROM epochs WHERE shared_from IS NOT NULL").getInt() == 1);
  const auto s = spent(db, spec.name);
  CHECK(s.trials == 3);
  CHECK(s.epochs == 5);
  CHECK(s.minutes > 0);
  CHECK(budget_spent(spec.sampling.budget, s) == "5 epochs recorded, the budget's 5");
  CHECK(budget_spent({0, 0, 1e6}, s).empty());
}

TEST_CASE("two comera sweep processes on one database propose distinct trials, each run once",
          "[adaptive][cli]") {
  TempDir dir;
  const std::string spec = dir.file("adaptive.json");
  std::ofstream(spec) << adaptive_spec({{"trials", 6}}, 2, 3).dump(2);
  const std::string db = dir.file("a.db");
  const std::vector<std::string> args = {"sweep", spec, "--db", db, "--quiet", "--no-front"};
  const pid_t a = comera::testing::spawn_cli(args, dir.file("a.log"));
  const pid_t b = comera::testing::spawn_cli(args, dir.file("b.log"));
  CHECK(comera::testing::wait_cli(a) == 0);
  CHECK(comera::testing::wait_cli(b) == 0);
  const auto p = proposals(db);
  REQUIRE(p.size() == 6);
  std::set<std::string> points;
  for (const auto& t : p) {
    CHECK(t.state == "complete");
    points.insert(t.point);
  }
  CHECK(points.size() == 6);
  SQLite::Database check(db, SQLite::OPEN_READONLY);
  CHECK(check.execAndGet("SELECT MAX(attempts) FROM trials").getInt() == 1);
}

TEST_CASE("scripts/slurm_sweep.sh runs an adaptive sweep in rounds: propose, run the shards, merge, "
          "propose from the merged results", "[adaptive][cli]") {
  TempDir dir;
  const std::string spec = dir.file("adaptive.json");
  std::ofstream(spec) << adaptive_spec({{"trials", 4}}).dump(2);
  const std::string script = comera::source_dir() + "/scripts/slurm_sweep.sh";
  const std::string common = " " + spec + " --tasks 2 --db-dir " + dir.file("rounds");
  auto sh = [&](const std::string& mode, const std::string& task = "") {
    const auto out = comera::run_process(
        {"/bin/sh", "-c", (task.empty() ? "" : "SLURM_ARRAY_TASK_ID=" + task + " ") + "COMERA=" +
                              comera::testing::cli_path() + " " + script + " " + mode + common},
        "slurm_sweep.sh", comera::ErrorOutput::Merge);
    INFO(out.output);
    REQUIRE(out.status == 0);
    return out.output;
  };
  for (int round = 0; round < 2; ++round) {
    CHECK_THAT(sh("--propose"), Contains("copied to the 2 tasks' databases"));
    sh("--task", "0");
    sh("--task", "1");
    CHECK_THAT(sh("--merge"), Contains("Pareto front"));
  }
  const std::string merged = dir.file("rounds") + "/tiny.db";
  const auto p = proposals(merged);
  REQUIRE(p.size() == 4);
  std::set<std::string> points;
  for (const auto& t : p) {
    CHECK(t.state == "complete");
    points.insert(t.point);
  }
  CHECK(points.size() == 4);
  // The second round proposed from the first round's two results, each seeing the other pending.
  SQLite::Database db(merged, SQLite::OPEN_READONLY);
  SQLite::Statement q(db, "SELECT json_extract(detail, '$.history.observed'), json_extract(detail, '$.history.pending') "
                          "FROM decisions WHERE kind = 'proposed' ORDER BY trial_id");
  std::vector<std::pair<int, int>> history;
  while (q.executeStep()) history.push_back({q.getColumn(0).getInt(), q.getColumn(1).getInt()});
  CHECK(history == std::vector<std::pair<int, int>>{{0, 0}, {0, 1}, {2, 0}, {2, 1}});
  CHECK(p[2].method == "gp-ehvi");
  // A grid spec has no proposals.
  const std::string grid = dir.file("grid.json");
  std::ofstream(grid) << comera::testing::tiny_sweep(2).dump(2);
  const auto refused = comera::run_process(
      {"/bin/sh", "-c", "COMERA=" + comera::testing::cli_path() + " " + script + " --propose " + grid + " --tasks 2 --db-dir " +
                            dir.file("g")},
      "slurm_sweep.sh", comera::ErrorOutput::Merge);
  CHECK(refused.status != 0);
  CHECK_THAT(refused.output, Contains("--propose needs an adaptive spec"));
}
