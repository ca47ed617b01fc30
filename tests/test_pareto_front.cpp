// Pareto fronts of a study read from a results database (hand-computed front and hypervolume),
// --where filters, maximised objectives, the gnuplot plot and the `comera pareto` command.
#include "core/util/error.h"
#include "search/pareto/front_plot.h"
#include "search/pareto/front_report.h"
#include "search/pareto/study_front.h"
#include "search/store/readable_cell.h"
#include "search/store/trial_queue.h"
#include "tests/support/catch.h"
#include "tests/support/cli_process.h"
#include "tests/support/temp_dir.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <limits>
#include <map>

using namespace comera;
using namespace comera::pareto;
using Catch::Matchers::Contains;
using comera::testing::TempDir;
using nlohmann::json;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Outcome {
  store::TrialState state;
  double loss, size, accuracy;
};

// Study "s": trial n has point {"gamma": n / 10}; the last trial stays queued.
void make_study(const std::string& path, const std::vector<Outcome>& outcomes) {
  auto db = store::ResultsDb::open(path);
  json spec = {{"published", {{{"label", "paper"}, {"size", 40}}}}};
  const auto study = store::create_or_get_study(db, "s", spec, "eval_loss:min,size:min");
  std::vector<json> configs;
  for (size_t i = 0; i <= outcomes.size(); ++i)
    configs.push_back({{"kind", "late"}, {"point", {{"gamma", (i + 1) / 10.0}}}});
  store::enqueue_trials(db, study, configs);
  for (const auto& o : outcomes) {
    const auto trial = store::claim_next_trial(db, study.id, "w", current_environment());
    store::finish_trial(db, trial->id, "w", o.state,
                        {{"eval_loss", o.loss}, {"size", o.size}, {"accuracy", o.accuracy}});
  }
}

const std::vector<Outcome> kOutcomes = {
    {store::TrialState::Complete, 1.0, 100, 0.60},  // #1 front
    {store::TrialState::Complete, 0.8, 300, 0.70},  // #2 front
    {store::TrialState::Complete, 1.2, 50, 0.50},   // #3 front
    {store::TrialState::Complete, 1.1, 200, 0.55},  // #4 dominated by #1
    {store::TrialState::Diverged, kNaN, 10, 0.30},  // #5 diverged: left out
};

std::vector<int64_t> front_trials(const FrontResult& r) {
  const auto table = front_rows(r);
  std::vector<int64_t> out;
  for (const auto& row : table.rows) out.push_back(row[0].get<int64_t>());
  return out;
}

// The front plot of the sample study (kOutcomes), its database in dir.
FrontPlot sample_plot(TempDir& dir) {
  make_study(dir.file("r.db"), kOutcomes);
  auto db = store::ResultsDb::open(dir.file("r.db"), store::ResultsDb::Mode::ReadOnly);
  return front_plot(study_front(db, {"s", "", {}, {}}));
}

}  // namespace

TEST_CASE("study front: non-dominated complete trials and their hypervolume", "[pareto]") {
  TempDir dir;
  make_study(dir.file("r.db"), kOutcomes);
  auto db = store::ResultsDb::open(dir.file("r.db"), store::ResultsDb::Mode::ReadOnly);

  const auto r = study_front(db, {"s", "", {}, {}});
  CHECK(r.values.size() == 4);
  CHECK(r.left_out == std::map<std::string, size_t>{{"diverged", 1}, {"queued", 1}});
  CHECK(front_trials(r) == std::vector<int64_t>{2, 1, 3});  // best eval_loss first
  // Reference: worst value + 10% of the range: loss 1.2 + 0.04, size 300 + 25.
  REQUIRE(r.reference.size() == 2);
  CHECK(r.reference[0] == Approx(1.24));
  CHECK(r.reference[1] == Approx(325));
  // Columns x in [0.8,1.0) [1.0,1.2) [1.2,1.24) of heights 25, 225, 275.
  CHECK(r.hypervolume == Approx(0.2 * 25 + 0.2 * 225 + 0.04 * 275));

  const auto given = study_front(db, {"s", "", {}, {2, 400}});
  CHECK(given.hypervolume == Approx(0.2 * 100 + 0.2 * 300 + 0.8 * 350));

  // Accuracy maximised: #2 (most accurate), #1 and #3 (smaller) stay; #1 beats #4 on both.
  const auto acc = study_front(db, {"s", "accuracy:max,size:min", {}, {}});
  CHECK(front_trials(acc) == std::vector<int64_t>{2, 1, 3});
  CHECK(acc.reference[0] == Approx(0.5 - 0.02));

  const auto filtered = study_front(db, {"s", "", {parse_condition("gamma >= 0.25")}, {}});
  CHECK(front_trials(filtered) == std::vector<int64_t>{4, 3});
  CHECK(filtered.left_out.size() == 2);

  CHECK_THROWS_WITH(study_front(db, {"nope", "", {}, {}}), Contains("it has: s"));
  CHECK_THROWS_WITH(study_front(db, {"s", "loss:min,size:min", {}, {}}),
                    Contains("recorded: accuracy, eval_loss, size"));
  CHECK_THROWS_WITH(study_front(db, {"s", "", {parse_condition("colour=red")}, {}}),
                    Contains("no column 'colour'"));
  CHECK_THROWS_WITH(parse_condition("gamma"), Contains("COLUMN OP VALUE"));
  // Percentages read as the fractions recorded; a word against numbers is an error, not nothing.
  const auto percent = study_front(db, {"s", "", {parse_condition("accuracy > 56%")}, {}});
  CHECK(percent.values.size() == 2);  // #1 and #2
  CHECK(percent.values.size() == study_front(db, {"s", "", {parse_condition("accuracy > 0.56")}, {}}).values.size());
  CHECK_THROWS_WITH(study_front(db, {"s", "", {parse_condition("accuracy>abc")}, {}}),
                    Contains("accuracy>abc") && Contains("holds numbers"));
}

TEST_CASE("complete trials without an asked objective are counted as left out, and set no reference",
          "[pareto]") {
  TempDir dir;
  {
    auto db = store::ResultsDb::open(dir.file("r.db"));
    const auto study = store::create_or_get_study(db, "s", json::object(), "size:min");
    store::enqueue_trials(db, study, std::vector<json>{{{"kind", "late"}, {"point", {{"i", 1}}}},
                                                       {{"kind", "late"}, {"point", {{"i", 2}}}},
                                                       {{"kind", "dense"}, {"point", {{"i", 3}}}}});
    // Two late trials with a loss target; a dense one of size 1000 without.
    for (const auto& values : std::vector<store::ObjectiveValues>{
             {{"size", 100}, {"loss_target", 1.0}}, {{"size", 200}, {"loss_target", 2.0}}, {{"size", 1000}}}) {
      const auto trial = store::claim_next_trial(db, study.id, "w", current_environment());
      store::finish_trial(db, trial->id, "w", store::TrialState::Complete, values);
    }
  }
  auto db = store::ResultsDb::open(dir.file("r.db"), store::ResultsDb::Mode::ReadOnly);
  const auto r = study_front(db, {"s", "size:min,loss_target:max", {}, {}});
  CHECK(r.values.size() == 2);
  CHECK(r.left_out == std::map<std::string, size_t>{{"complete, no loss_target", 1}});
  // The reference from the two placed trials: size 200 + 10, loss target 1.0 - 0.1.
  REQUIRE(r.reference.size() == 2);
  CHECK(r.reference[0] == Approx(210));
  CHECK(r.reference[1] == Approx(0.9));
  CHECK_THAT(front_summary(r), Contains("2 complete trials (left out: 1 complete, no loss_target)"));
}

TEST_CASE("front report: summary, table and JSON", "[pareto]") {
  TempDir dir;
  make_study(dir.file("r.db"), kOutcomes);
  auto db = store::ResultsDb::open(dir.file("r.db"), store::ResultsDb::Mode::ReadOnly);
  const auto r = study_front(db, {"s", "", {}, {}});
  CHECK_THAT(front_summary(r), Contains("4 complete trials (left out: 1 diverged, 1 queued), 3 on "
                                        "the Pareto front of eval_loss (min), size (min)") &&
                                   Contains("hypervolume 61 against the reference point (1.24, 325)"));
  const json j = front_json(r, true);
  CHECK(j["trials"].size() == 4);
  CHECK(j["trials"][3]["front"] == "");
  CHECK(j["trials"][0]["front"] == "*");
  CHECK(j["left_out"]["diverged"] == 1);
  CHECK(front_json(r, false)["front"][0]["gamma"] == Approx(0.2));

  // The text table: what each trial is, rounded for reading, the front marked.
  std::ostringstream text;
  write_front_text(text, study_front(db, {"s", "size:min,accuracy:max", {}, {}}), true);
  CHECK_THAT(text.str(), Contains("trial  id  front  kind  gamma  size  accuracy  eval_loss") &&
                             Contains("70.00%") && Contains("* = on the Pareto front"));
}

TEST_CASE("table cells rounded for reading by what they measure", "[pareto]") {
  using comera::store::readable_cell;
  CHECK(readable_cell("accuracy", 0.47406) == "47.41%");
  CHECK(readable_cell("train_accuracy", 1.0) == "100.00%");
  CHECK(readable_cell("size", 2061530) == "2,061,530");
  CHECK(readable_cell("tensorized_size", 999.0) == "999");
  CHECK(readable_cell("size", -1234567.0) == "-1,234,567");
  CHECK(readable_cell("compression", 48.929) == "48.9x");
  CHECK(readable_cell("eval_loss", 1.7777509) == "1.778");
  CHECK(readable_cell("epochs", 12) == "12");
  CHECK(readable_cell("eval_loss", kNaN) == "");
  CHECK(readable_cell("eval_loss", json()) == "");
  CHECK(readable_cell("notes", "lost emb") == "lost emb");
}

TEST_CASE("front plot: staircase, dominated points and published figures", "[pareto]") {
  TempDir dir;
  const auto plot = sample_plot(dir);
  CHECK(plot.front.size() == 3);
  CHECK(plot.dominated.size() == 1);  // #4
  REQUIRE(plot.published.size() == 1);
  CHECK(std::isnan(plot.published[0].x));
  CHECK(plot.published[0].y == 40);
  const std::string script = gnuplot_script(plot, dir.file("f.png"));
  CHECK_THAT(script, Contains("with steps") && Contains("\"#2 (id 2) late\"") &&
                         Contains("size (parameters)") && Contains("eval loss (cross-entropy, nats)") && Contains("set arrow 1") &&
                         Contains("\"paper\""));
  // The size axis spans 40..300: linear; its range includes the published 40.
  CHECK_THAT(script, !Contains("logscale") && Contains("set yrange [19.2:320.8]"));
}

TEST_CASE("front plot: gnuplot draws the PNG", "[pareto][gnuplot]") {
  TempDir dir;
  const auto plot = sample_plot(dir);
  bool have_gnuplot = false;
  try {
    have_gnuplot = comera::run_process({"gnuplot", "--version"}, "gnuplot").status == 0;
  } catch (const comera::Error&) {
  }
  INFO("gnuplot draws the PNG: scripts/setup.sh installs it");
  REQUIRE(have_gnuplot);
  write_png(plot, dir.file("plots/f.png"));
  std::ifstream png(dir.file("plots/f.png"), std::ios::binary);
  char magic[8] = {};
  png.read(magic, 8);
  CHECK(std::string(magic + 1, 3) == "PNG");
}

TEST_CASE("comera pareto prints the front, as a table, JSON or CSV", "[pareto][cli]") {
  TempDir dir;
  make_study(dir.file("r.db"), kOutcomes);
  auto run = [&](const std::string& args, int& status) {
    const auto r = comera::testing::run_cli("pareto --db " + dir.file("r.db") + " " + args);
    status = r.status;
    return r.output;
  };
  int status = 0;
  const std::string text = run("--study s --where kind=late", status);
  CHECK(status == 0);
  CHECK_THAT(text, Contains("3 on the Pareto front") && Contains("hypervolume 61 "));
  const json j = json::parse(run("--study s --format json --ref 2,400", status));
  CHECK(j["hypervolume"] == Approx(0.2 * 100 + 0.2 * 300 + 0.8 * 350));
  const std::string csv = run("--study s --format csv", status);
  CHECK_THAT(csv, Contains("trial,id,kind,state,gamma,eval_loss,size,accuracy,target,size_vs_s0,loss_vs_l0,notes,proposed\n2,2,late,complete,"));
  CHECK_THAT(run("--study s --format xml", status), Contains("use table, csv or json"));
  CHECK(status != 0);
}

TEST_CASE("pareto gives each trial's database id beside its number in the study", "[pareto][cli]") {
  TempDir dir;
  {
    // Another study's three trials first: the sample study's trial n has id n + 3.
    auto db = store::ResultsDb::open(dir.file("r.db"));
    const auto other = store::create_or_get_study(db, "other", json::object(), "size:min");
    store::enqueue_trials(db, other, std::vector<json>{{{"point", {{"x", 1}}}}, {{"point", {{"x", 2}}}}, {{"point", {{"x", 3}}}}});
  }
  auto outcomes = kOutcomes;
  outcomes.push_back({store::TrialState::Pruned, 1.5, 20, 0.2});  // #6
  make_study(dir.file("r.db"), outcomes);
  const auto r = comera::testing::run_cli("pareto --db " + dir.file("r.db") + " --study s --all");
  CHECK(r.status == 0);
  CHECK_THAT(r.output, Contains("trial  id  front") && Contains("#6 (id 9) ") &&
                           Contains("id: for `comera runs show ID`"));
  const auto csv = comera::testing::run_cli("pareto --db " + dir.file("r.db") + " --study s --format csv");
  CHECK_THAT(csv.output, Contains("trial,id,kind,") && Contains("\n2,5,late,"));
  const json j = json::parse(comera::testing::run_cli("pareto --db " + dir.file("r.db") + " --study s --json").output);
  CHECK(j["front"][0]["trial"] == 2);
  CHECK(j["front"][0]["id"] == 5);
  CHECK(j["pruned"][0] == json{{"trial", 6}, {"id", 9}, {"decision", ""}});
  auto db = store::ResultsDb::open(dir.file("r.db"), store::ResultsDb::Mode::ReadOnly);
  CHECK(front_plot(study_front(db, {"s", "", {}, {}})).front[1].label == "#2 (id 5) late");
  // runs show takes the id and says both.
  CHECK_THAT(comera::testing::run_cli("runs show 5 --db " + dir.file("r.db")).output, Contains("trial 5: study s #2,"));
}

TEST_CASE("comera pareto --plot writes the plot", "[pareto][cli][gnuplot]") {
  TempDir dir;
  make_study(dir.file("r.db"), kOutcomes);
  const auto r = comera::testing::run_cli("pareto --db " + dir.file("r.db") + " --study s --plot " + dir.file("front.png"));
  CHECK(r.status == 0);
  CHECK(std::ifstream(dir.file("front.png")).good());
}

TEST_CASE("comera pareto --plot with nothing to draw fails before printing anything", "[pareto][cli]") {
  TempDir dir;
  make_study(dir.file("r.db"), {{store::TrialState::Diverged, kNaN, 10, 0.3}});  // no complete trial
  const auto r = comera::testing::run_cli("pareto --db " + dir.file("r.db") + " --study s --plot " + dir.file("f.png"));
  INFO(r.output);
  CHECK(r.status != 0);
  CHECK_THAT(r.output, Contains("no trial has finite values for both objectives") && !Contains("complete trials"));
  CHECK_FALSE(std::ifstream(dir.file("f.png")).good());
}
