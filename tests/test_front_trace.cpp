// How a front grew, on a hand-made study: trials end in a known order with known epochs, training
// times and objectives, and the trace's cumulative compute and hypervolumes (log10 size against
// accuracy) are compared with values worked out by hand; `comera bench fronts` over two such
// databases names the compute that reached the target method's hypervolume and the share of it
// held at half the target's compute, and `bench fronts-plot`
// puts such results on the grid's scale.
#include "core/util/error.h"
#include "search/pareto/front_trace.h"
#include "search/store/epoch_metrics.h"
#include "search/store/objectives.h"
#include "search/store/trial_queue.h"
#include "tests/support/catch.h"
#include "tests/support/cli_process.h"
#include "tests/support/temp_dir.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

using namespace comera;
using Catch::Matchers::Contains;
using comera::testing::TempDir;

namespace {

struct Planned {
  store::TrialState state;
  int epochs;
  double seconds;  // elapsed_s at the last epoch
  double size, accuracy;
};

// One study, trials ending in the order given.
void make_study(const std::string& path, const std::vector<Planned>& trials,
                const std::string& objectives = "size:min,accuracy:max") {
  auto db = store::ResultsDb::open(path);
  const auto study = store::create_or_get_study(db, "s", nlohmann::json::object(), objectives);
  Environment env;
  env.device = "test-cpu";
  for (size_t i = 0; i < trials.size(); ++i) {
    const auto& p = trials[i];
    store::enqueue_trials(db, study, {{{"point", {{"i", i}}}}});
    const auto t = store::claim_next_trial(db, study.id, "w", env);
    REQUIRE(t);
    for (int e = 0; e < p.epochs; ++e) {
      store::EpochRecord r;
      r.epoch = e;
      r.stage = "early";
      r.metrics = {{"elapsed_s", p.seconds * (e + 1) / p.epochs}, {"size", p.size}, {"accuracy", p.accuracy}};
      store::record_epoch(db, t->id, r);
    }
    // The second objective gets the planned accuracy, whatever the study calls it.
    const auto second = store::parse_objectives(objectives).at(1).name;
    store::finish_trial(db, t->id, "w", p.state, {{"size", p.size}, {second, p.accuracy}});
  }
}

pareto::TraceOptions log_size() {
  return {{{"size", true}, {"accuracy", false}}, {true, false}, {1000, 0}};
}

// grid.db reaches a hypervolume of 0.9 (log10 size from 1000, accuracy) after 7 trial-epochs;
// adaptive-0.db reaches it after 4 and ends at 1.0 after 6.
void grid_and_adaptive(const TempDir& dir) {
  make_study(dir.file("grid.db"), {{store::TrialState::Complete, 2, 30, 100, 0.5},
                                   {store::TrialState::Complete, 3, 30, 100, 0.3},
                                   {store::TrialState::Complete, 2, 60, 10, 0.4}});
  make_study(dir.file("adaptive-0.db"), {{store::TrialState::Complete, 2, 30, 10, 0.4},
                                         {store::TrialState::Complete, 2, 30, 100, 0.5},
                                         {store::TrialState::Complete, 2, 30, 1, 0.1}});
}

}  // namespace

TEST_CASE("the front trace adds each ended trial's compute and the complete trials' hypervolume", "[front_trace]") {
  TempDir dir;
  make_study(dir.file("a.db"), {{store::TrialState::Complete, 2, 30, 100, 0.5},
                                {store::TrialState::Pruned, 1, 12, 50, 0.1},
                                {store::TrialState::Complete, 2, 60, 10, 0.4},
                                {store::TrialState::Complete, 2, 30, 100, 0.3}});
  auto db = store::ResultsDb::open(dir.file("a.db"), store::ResultsDb::Mode::ReadOnly);
  const auto steps = pareto::front_trace(db, "s", log_size());
  REQUIRE(steps.size() == 4);
  // (3 - 2) x 0.5, then nothing from the pruned trial, then (2 - 1) x 0.4 more, then a dominated one.
  const std::vector<double> hv = {0.5, 0.5, 0.9, 0.9};
  const std::vector<int64_t> epochs = {2, 3, 5, 7};
  const std::vector<double> minutes = {0.5, 0.7, 1.7, 2.2};
  for (size_t i = 0; i < 4; ++i) {
    CHECK(steps[i].trial == static_cast<int64_t>(i + 1));
    CHECK(steps[i].hypervolume == Approx(hv[i]));
    CHECK(steps[i].epochs == epochs[i]);
    CHECK(steps[i].minutes == Approx(minutes[i]));
  }
  CHECK(steps[1].state == "pruned");
  auto bad = log_size();
  bad.reference = {1000};
  CHECK_THROWS_AS(pareto::front_trace(db, "s", bad), Error);
}

TEST_CASE("comera bench fronts names the compute that reached the target's hypervolume", "[front_trace][cli]") {
  TempDir dir;
  grid_and_adaptive(dir);
  const auto out = comera::testing::run_cli("bench fronts " + dir.file("grid.db") + " " + dir.file("adaptive-0.db") +
                                            " --log size --ref 1000,0 --json");
  REQUIRE(out.status == 0);
  const auto j = nlohmann::json::parse(out.output);
  CHECK(j["target"]["hypervolume"].get<double>() == Approx(0.9));
  REQUIRE(j["groups"].size() == 2);
  CHECK(j["groups"][0]["method"] == "adaptive");
  CHECK(j["groups"][0]["epochs_to_target"].get<double>() == 4);
  CHECK(j["groups"][0]["hypervolume"]["mean"].get<double>() == Approx(0.9 + 1 * 0.1));
  CHECK(j["groups"][1]["epochs_to_target"].get<double>() == 7);
  // At half the grid's 7 trial-epochs (3.5) the adaptive run held 0.8 (its first trial), the
  // grid 0.5 (its first trial: log10 size 2 from 3, accuracy 0.5); as shares of 0.9.
  CHECK(j["target"]["half_compute"].get<double>() == 3.5);
  CHECK(j["groups"][0]["runs"][0]["at_half_compute"].get<double>() == Approx(0.8 / 0.9));
  CHECK(j["groups"][1]["at_half_compute"][0].get<double>() == Approx(0.5 / 0.9));
  const auto text = comera::testing::run_cli("bench fronts " + dir.file("grid.db") + " --log size --ref 1000,0");
  CHECK_THAT(text.output, Contains("target: grid's mean final hypervolume, 0.9, and half its 7 trial-epochs, 3.5") &&
                             Contains("(1/1); 0.556"));
  CHECK_THAT(comera::testing::run_cli("bench fronts " + dir.file("grid.db")).output, Contains("--ref"));
  CHECK_THAT(comera::testing::run_cli("bench fronts " + dir.file("grid.db") + " --ref 1000").output,
             Contains("--ref has 1 values for 2 objectives"));
  CHECK_THAT(comera::testing::run_cli("bench fronts " + dir.file("grid.db") + " --ref 1,0 --target lte").output,
             Contains("--target lte"));
  // The same database twice would count as two runs; a study of other objectives would score 0.
  const auto twice = comera::testing::run_cli("bench fronts " + dir.file("grid.db") + " " + dir.file("grid.db") +
                                              " --log size --ref 1000,0");
  CHECK(twice.status == 1);
  CHECK_THAT(twice.output, Contains("given twice"));
  make_study(dir.file("other-0.db"), {{store::TrialState::Complete, 2, 30, 100, 0.5}}, "size:min,eval_loss:min");
  const auto other = comera::testing::run_cli("bench fronts " + dir.file("grid.db") + " " + dir.file("other-0.db") +
                                              " --log size --ref 1000,0");
  CHECK(other.status == 1);
  CHECK_THAT(other.output, Contains("other-0.db: study 's' has objectives size:min,eval_loss:min, not "
                                    "size:min,accuracy:max (those of " + dir.file("grid.db") + ")"));
}

TEST_CASE("comera bench fronts-plot puts tasks on the grid's scale: compute and hypervolume as fractions of "
          "the grid's", "[front_trace][cli]") {
  TempDir dir;
  // The adaptive run reaches 0.9 at 4/7 of the grid's compute and ends at 1.0 (1.0 / 0.9).
  grid_and_adaptive(dir);
  const auto fronts = comera::testing::run_cli("bench fronts " + dir.file("grid.db") + " " + dir.file("adaptive-0.db") +
                                               " --log size --ref 1000,0 --json");
  REQUIRE(fronts.status == 0);
  {
    std::ofstream(dir.file("a.json")) << fronts.output;
  }
  const auto out = comera::testing::run_cli("bench fronts-plot one=" + dir.file("a.json") + " two=" +
                                            dir.file("a.json") + " --json");
  REQUIRE(out.status == 0);
  const auto j = nlohmann::json::parse(out.output);
  REQUIRE(j.size() == 4);
  CHECK(j[0]["task"] == "one");
  CHECK(j[0]["method"] == "adaptive");
  CHECK(j[0]["final"].get<double>() == Approx(1.0 / 0.9));
  CHECK(j[0]["runs_reach_grid_at"][0].get<double>() == Approx(4.0 / 7));
  // The mean curve steps at 2/7 (0.8 / 0.9 of the grid's), 4/7 (1) and 6/7 (1.0 / 0.9).
  CHECK(j[0]["mean_reaches_grid_at"].get<double>() == Approx(0.58));
  const auto& curve = j[0]["curve"];
  CHECK(curve[28][1].get<double>() == Approx(0.0));
  CHECK(curve[29][1].get<double>() == Approx(0.8 / 0.9));
  CHECK(curve[57][1].get<double>() == Approx(0.8 / 0.9));
  CHECK(curve[58][1].get<double>() == Approx(1.0));
  CHECK(curve[86][1].get<double>() == Approx(1.0 / 0.9));
  CHECK(j[1]["method"] == "grid");
  CHECK(j[1]["final"].get<double>() == Approx(1));
  CHECK(j[1]["mean_reaches_grid_at"].get<double>() == Approx(1));
  CHECK(j[3]["task"] == "two");
  CHECK_THAT(comera::testing::run_cli("bench fronts-plot " + dir.file("a.json")).output, Contains("TASK=FRONTS.json"));
  CHECK_THAT(comera::testing::run_cli("bench fronts-plot x=" + dir.file("missing.json")).output,
             Contains("missing.json: cannot read it"));
  CHECK_THAT(comera::testing::run_cli("bench fronts-plot x=" + dir.file("a.json") + " --plot " + dir.file("a.json")).output,
             Contains("--plot"));
  // A file of another shape (a step's epochs as text) is named with its fix before any work.
  auto bad = nlohmann::json::parse(fronts.output);
  bad["groups"][0]["runs"][0]["steps"][0]["epochs"] = "four";
  {
    std::ofstream(dir.file("bad.json")) << bad.dump();
  }
  const auto refused = comera::testing::run_cli("bench fronts-plot x=" + dir.file("bad.json") + " --plot " + dir.file("p.png"));
  CHECK(refused.status != 0);
  CHECK_THAT(refused.output, Contains("bad.json: not what comera bench fronts --json writes") && Contains("write it again"));
  CHECK_FALSE(std::filesystem::exists(dir.file("p.png")));
}
