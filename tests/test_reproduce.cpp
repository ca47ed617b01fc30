// `comera reproduce`: the comparison table against hand-made trials and published figures
// (means, trial counts, ratios, ranges, uncertain figures, missing cells), paper spec errors,
// the scaled-down sweep, and every spec in experiments/paper/ expanding to valid trials.
#include "core/util/error.h"
#include "search/environment.h"
#include "search/reproduce/comparison_table.h"
#include "search/reproduce/paper_spec.h"
#include "search/store/trial_queue.h"
#include "search/sweep/published_figures.h"
#include "search/sweep/sweep_spec.h"
#include "search/sweep/trial_expansion.h"
#include "core/util/source_dir.h"
#include "tests/support/catch.h"
#include "tests/support/cli_process.h"
#include "tests/support/quickstart_db.h"
#include "tests/support/temp_dir.h"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

using namespace comera;
using Catch::Matchers::Contains;
using comera::testing::TempDir;
using nlohmann::json;

namespace {

void write(const std::string& path, const json& j) { std::ofstream(path) << j.dump(2); }

struct Made {
  json point;
  std::string kind;
  store::TrialState state;
  std::map<std::string, double> objectives;
};

// Study "t" with the given trials in order (each claimed and finished), plus one left queued.
void make_study(const std::string& db_file, const std::vector<Made>& trials) {
  auto db = store::ResultsDb::open(db_file);
  const auto study = store::create_or_get_study(db, "t", json::object(), "size_mb:min,accuracy:max");
  std::vector<json> configs;
  for (size_t i = 0; i < trials.size(); ++i)
    configs.push_back({{"kind", trials[i].kind}, {"point", trials[i].point}, {"n", i}});
  configs.push_back({{"kind", "late"}, {"point", {{"size_ratio", 0.2}}}, {"n", "queued"}});
  store::enqueue_trials(db, study, configs);
  for (const auto& t : trials) {
    const auto claimed = store::claim_next_trial(db, study.id, "w", current_environment());
    REQUIRE(claimed);
    store::finish_trial(db, claimed->id, "w", t.state, t.objectives);
  }
}

json table_spec() {
  return {{"name", "t"},
          {"title", "hand-made"},
          {"sweep", {{"base", "base.json"}, {"axes", json::object()}}},
          {"table",
           {{"rows",
             {{{"label", "dense"}, {"where", {"kind=dense"}}},
              {{"label", "late 0.2"}, {"where", {"kind=late", "size_ratio=0.2"}}},
              {{"label", "late 0.5"}, {"where", {"kind=late", "size_ratio=0.5"}}}}},
            {"columns",
             {{{"label", "MB"}, {"metric", "size_mb"}, {"published", {{"dense", "/x/dense_mb"}}}},
              {{"label", "acc %"}, {"metric", "accuracy"}, {"scale", 100}},
              {{"label", "dense MB"}, {"metric", "size_mb"}, {"where", {"kind=dense"}}},
              {{"label", "x"},
               {"ratio", {"dense MB", "MB"}},
               {"published", {{"*", "/x/range"}, {"late 0.2", "/x/unsure"}}}}}},
            {"notes", {"a note"}}}}};
}

}  // namespace

TEST_CASE("comparison table: means over complete trials beside published figures", "[reproduce]") {
  TempDir dir;
  const std::string db_file = dir.file("r.db");
  using S = store::TrialState;
  make_study(db_file, {
      {json::object(), "dense", S::Complete, {{"size_mb", 10}, {"accuracy", 0.60}}},
      {{{"seed", 1}}, "dense", S::Complete, {{"size_mb", 12}, {"accuracy", 0.64}}},
      {{{"size_ratio", 0.2}}, "late", S::Complete, {{"size_mb", 0.5}, {"accuracy", 0.5}}},
      {{{"size_ratio", 0.2}, {"seed", 1}}, "late", S::Diverged, {{"size_mb", 0.1}, {"accuracy", 0.1}}},
      {{{"size_ratio", 0.5}}, "late", S::Failed, {{"size_mb", 3}, {"accuracy", 0.4}}},
  });
  auto figure = [](const json& value, const std::string& certainty) {
    return json{{"value", value}, {"source", "hand-made"}, {"certainty", certainty}};
  };
  write(dir.file("reference.json"),
        {{"certainty", {{"reported", "in a table"}, {"uncertain", "from a summary"}}},
         {"x", {{"dense_mb", figure(256, "reported")},
                {"range", figure({2, 3}, "reported")},
                {"unsure", figure(80, "uncertain")}}}});
  write(dir.file("t.json"), table_spec());
  const auto spec = reproduce::load_paper_spec(dir.file("t.json"));
  auto db = store::ResultsDb::open(db_file, store::ResultsDb::Mode::ReadOnly);
  sweep::PublishedFigures figures(dir.file("reference.json"));
  const auto table = reproduce::comparison_table(db, spec, figures);

  CHECK(table.header == std::vector<std::string>{"", "MB", "paper", "acc %", "dense MB", "x", "paper"});
  REQUIRE(table.rows.size() == 3);
  // Dense: two complete trials, mean 11 MB and 62% with standard errors sqrt(2)/sqrt(2) = 1 and
  // sqrt(8)/sqrt(2) = 2; ratio 11 / 11.
  CHECK(table.rows[0] ==
        std::vector<std::string>{"dense", "11 ± 1 (n=2)", "256", "62 ± 2 (n=2)", "11 ± 1 (n=2)", "1", "2-3"});
  // Late 0.2: the diverged and the queued trial are left out; no dense trial in this row.
  CHECK(table.rows[1] == std::vector<std::string>{"late 0.2", "0.5", "", "50", "-", "-", "80 (uncertain)"});
  // Late 0.5: its only trial failed.
  CHECK(table.rows[2] == std::vector<std::string>{"late 0.5", "-", "", "-", "-", "-", "2-3"});

  std::ostringstream md;
  reproduce::write_markdown(md, table);
  CHECK(md.str().rfind("|  | MB | paper | acc % | dense MB | x | paper |\n|---|---:|", 0) == 0);
  CHECK_THAT(md.str(), Contains("| late 0.2 | 0.5 |  | 50 | - | - | 80 (uncertain) |\n"));
  std::ostringstream text;
  reproduce::write_text(text, table);
  CHECK_THAT(text.str(), Contains("dense     11 ± 1 (n=2)    256"));
}

TEST_CASE("paper specs: errors name the key; the scaled sweep patches the full one", "[reproduce]") {
  TempDir dir;
  write(dir.file("base.json"), {{"training", {{"epochs", 30}}}, {"model", {{"layers", 6}}}});
  json j = table_spec();
  j["scaled"] = {{"note", "fewer epochs"}, {"set", {{"base.training.epochs", 2}, {"axes.seeds", {1}}}}};
  write(dir.file("t.json"), j);
  const auto spec = reproduce::load_paper_spec(dir.file("t.json"));
  CHECK(spec.notes == std::vector<std::string>{"a note"});
  const json full = reproduce::sweep_json(spec, true), scaled = reproduce::sweep_json(spec, false);
  CHECK(full["name"] == "t");
  CHECK(full["base"] == json{{"training", {{"epochs", 30}}}, {"model", {{"layers", 6}}}});
  CHECK(scaled["base"] == json{{"training", {{"epochs", 2}}}, {"model", {{"layers", 6}}}});
  CHECK(scaled["axes"] == json{{"seeds", {1}}});
  CHECK_FALSE(full["axes"].contains("seeds"));

  j = table_spec();
  j["table"]["columns"][3]["ratio"] = {"dense MB", "nope"};
  write(dir.file("bad.json"), j);
  CHECK_THROWS_WITH(reproduce::load_paper_spec(dir.file("bad.json")),
                    Contains("ratio names 'nope'"));
  j = table_spec();
  j["scaled"] = {{"set", json::object()}};
  write(dir.file("bad.json"), j);
  CHECK_THROWS_WITH(reproduce::load_paper_spec(dir.file("bad.json")), Contains("scaled.note"));
  CHECK_THROWS_WITH(reproduce::load_paper_spec("no_such_table"),
                    Contains("no paper table 'no_such_table'") && Contains("mnli_table"));
}

TEST_CASE("every table in experiments/paper expands to valid trials, scaled and full", "[reproduce]") {
  const std::string reference = sweep::default_figures_file();
  const auto names = reproduce::list_paper_specs();
  CHECK(std::count(names.begin(), names.end(), "mnli_table") == 1);
  CHECK(std::count(names.begin(), names.end(), "step_speed_memory") == 1);
  CHECK(std::count(names.begin(), names.end(), "dlrm_table") == 1);
  CHECK(std::count(names.begin(), names.end(), "published_figures") == 0);
  for (const auto& name : names) {
    INFO(name);
    const auto spec = reproduce::load_paper_spec(name);
    CHECK_FALSE(spec.scaled_note.empty());
    for (bool full : {false, true}) {
      const auto trials = sweep::expand_trials(
          sweep::parse_sweep_spec(reproduce::sweep_json(spec, full), spec.file, reference));
      CHECK(trials.size() >= spec.rows.size());
    }
    // Every published figure the table names is in the reference file.
    sweep::PublishedFigures figures(reference);
    for (const auto& column : spec.columns)
      for (const auto& [row, figure] : column.published.items())
        CHECK_NOTHROW(figures.resolve(figure, name + " " + column.label + " " + row));
  }
}

TEST_CASE("reproduce --seeds runs every trial under N seeds into a database of its own", "[reproduce][cli]") {
  TempDir dir;
  const std::string data = dir.file("wordnet");
  comera::testing::run_from_root("data build-wordnet --source " + comera::source_dir() + "/tests/fixtures/wordnet --out " + data);
  json spec = {{"name", "tiny"},
               {"title", "a table on the WordNet fixtures"},
               {"sweep",
                {{"base", comera::source_dir() + "/experiments/sweeps/quickstart_base.json"},
                 {"overrides", {{"data.dir", data}}},
                 {"objectives", "eval_loss:min,size:min"},
                 {"baselines", {"dense", "early"}},
                 {"axes", json::object()}}},
               {"scaled", {{"note", "nothing"}, {"set", json::object()}}},
               {"table",
                {{"rows", {{{"label", "dense"}, {"where", {"kind=dense"}}}, {{"label", "early"}, {"where", {"kind=early"}}}}},
                 {"columns", {{{"label", "eval loss"}, {"metric", "eval_loss"}}}}}}};
  write(dir.file("tiny.json"), spec);
  const std::string args = "reproduce " + dir.file("tiny.json") + " --quiet --db " + dir.file("s.db") + " --out " +
                           dir.file("s.md");
  const std::string out = comera::testing::run_from_root(args + " --seeds 2");
  // Each row holds its two seeds' mean with its standard error, worked out here from the trials.
  SQLite::Database db(dir.file("s.db"), SQLite::OPEN_READONLY);
  CHECK(db.execAndGet("SELECT COUNT(DISTINCT seed) FROM trials").getInt() == 2);
  for (const std::string kind : {"dense", "early"}) {
    SQLite::Statement q(db, "SELECT o.value FROM objectives o JOIN trials t ON t.id = o.trial_id "
                            "WHERE o.name = 'eval_loss' AND json_extract(t.config, '$.kind') = ?");
    q.bind(1, kind);
    std::vector<double> v;
    while (q.executeStep()) v.push_back(q.getColumn(0).getDouble());
    REQUIRE(v.size() == 2);
    const double mean = (v[0] + v[1]) / 2, se = std::abs(v[0] - v[1]) / 2;
    char cell[96];
    std::snprintf(cell, sizeof cell, "%.4g ± %.4g (n=2)", mean, se);
    CHECK_THAT(out, Contains(kind) && Contains(cell));
  }
  spec["sweep"]["axes"]["repeats"] = 3;
  write(dir.file("own.json"), spec);
  const auto refused = comera::testing::run_cli("reproduce " + dir.file("own.json") + " --seeds 2 --db " +
                                                dir.file("o.db") + " --out " + dir.file("o.md"));
  CHECK(refused.status != 0);
  CHECK_THAT(refused.output, Contains("sets its own seeds") && Contains("--seeds"));
}
