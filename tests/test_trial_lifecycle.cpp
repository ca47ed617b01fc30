// The one trial lifecycle (search/runs): every trial's config in one shape, named by what it
// trains; a `comera train` run's trial linked to its checkpoint and continued on resume; a
// claimed trial that times single steps recorded through the same recorder as training.
#include "search/environment.h"
#include "core/training/experiment.h"
#include "core/util/error.h"
#include "search/runs/claim_heartbeat.h"
#include "search/runs/claimed_trial.h"
#include "search/runs/recorded_run.h"
#include "search/runs/trial_config.h"
#include "search/runs/trial_link.h"
#include "search/store/epoch_metrics.h"
#include "search/store/objectives.h"
#include "search/store/studies.h"
#include "search/store/trial_queue.h"
#include "search/store/trials.h"
#include "tests/support/catch.h"
#include "tests/support/temp_dir.h"
#include "tests/support/tiny_trainer.h"

#include <SQLiteCpp/Statement.h>

#include <atomic>
#include <filesystem>
#include <thread>
#include <tuple>

using namespace comera;
using comera::testing::TempDir;

namespace {

nlohmann::json experiment(bool late = false) {
  auto model = testing::tiny_config().to_json();
  nlohmann::json training = {{"batch_size", 4}, {"seed", 5}};
  if (late) training["late_stage"] = {{"start_epoch", 1}};
  return {{"name", "tiny"}, {"model", model}, {"training", training}};
}

// A study "s" with one trial of `e`, claimed by worker "w".
std::pair<store::Study, store::Trial> claimed(store::ResultsDb& db, const nlohmann::json& e) {
  const auto study = store::create_or_get_study(db, "s", nlohmann::json::object());
  store::enqueue_trials(db, study, {trial_config(e, 5)});
  const auto trial = store::claim_next_trial(db, study.id, "w", current_environment());
  REQUIRE(trial);
  return {study, *trial};
}

}  // namespace

TEST_CASE("every trial's config has one shape, its kind named by what it trains", "[lifecycle]") {
  const auto e = experiment();
  const auto config = trial_config(e, 5);
  CHECK(config == nlohmann::json{{"kind", "early"}, {"point", nlohmann::json::object()}, {"seed", 5}, {"experiment", e}});
  CHECK(trial_kind(experiment(true)) == "late");
  auto dense = e;
  dense["model"].erase("tensorized");
  CHECK(trial_kind(dense) == "dense");
  auto galore = e;
  galore["method"] = "galore";
  CHECK(trial_kind(galore) == "galore");
  auto tt_called_dense = e;
  tt_called_dense["method"] = "dense";
  CHECK(trial_kind(tt_called_dense) == "dense");
  CHECK(trial_config(e, 5, {{"lr", 0.1}}, "late")["kind"] == "late");
}

TEST_CASE("a train run's trial follows its checkpoint: continued while unfinished, new after", "[lifecycle]") {
  TempDir dir;
  auto db = store::ResultsDb::open(dir.file("r.db"));
  const auto checkpoint = dir.file("run.pt");
  const auto config = trial_config(experiment(), 5);
  const auto first = link_trial(db, config, checkpoint, "w", false, "cpu");
  CHECK(first.state == store::TrialState::Running);
  CHECK(first.study == store::kRunsStudy);
  REQUIRE(read_trial_link(checkpoint));
  CHECK(read_trial_link(checkpoint)->trial == first.id);
  CHECK(read_trial_link(checkpoint)->db == std::filesystem::absolute(db.path()).string());

  // Resumed while running (its process killed), and after being killed: the same trial, running
  // again, each resume one attempt more.
  CHECK(first.attempts == 1);
  const auto resumed = link_trial(db, config, checkpoint, "w", true, "cpu");
  CHECK(resumed.id == first.id);
  CHECK(resumed.attempts == 2);
  store::finish_trial(db, first.id, "w", store::TrialState::Killed, {}, "interrupted");
  const auto again = link_trial(db, config, checkpoint, "w", true, "cpu");
  CHECK(again.id == first.id);
  CHECK(again.state == store::TrialState::Running);
  CHECK(again.attempts == 3);
  // A run started afresh, or one taken further after its trial completed, is a new trial.
  const auto fresh = link_trial(db, config, checkpoint, "w", false, "cpu");
  CHECK(fresh.id != first.id);
  CHECK(fresh.replica == 1);
  store::finish_trial(db, fresh.id, "w", store::TrialState::Complete, {{"eval_loss", 1}, {"size", 2}});
  const auto further = link_trial(db, config, checkpoint, "w", true, "cpu");
  CHECK(further.id != fresh.id);
  CHECK(read_trial_link(checkpoint)->trial == further.id);

  // One path reads every trial's settings, whichever command made it.
  const auto sweep = store::create_or_get_study(db, "sweep", nlohmann::json::object());
  store::enqueue_trials(db, sweep, {trial_config(experiment(true), 7, {{"lr", 1}})});
  SQLite::Statement rows(db.sql(), "SELECT json_extract(config, '$.seed'), json_extract(config, '$.kind'), "
                                   "json_extract(config, '$.experiment.training.batch_size') FROM trials ORDER BY id");
  std::vector<std::tuple<int64_t, std::string, int64_t>> read;
  while (rows.executeStep())
    read.emplace_back(rows.getColumn(0).getInt64(), rows.getColumn(1).getString(), rows.getColumn(2).getInt64());
  REQUIRE(read.size() == 4);
  for (size_t i = 0; i < 3; ++i) CHECK(read[i] == std::tuple<int64_t, std::string, int64_t>{5, "early", 4});
  CHECK(read[3] == std::tuple<int64_t, std::string, int64_t>{7, "late", 4});
}

TEST_CASE("a claimed trial that times single steps is recorded complete with its measurements", "[lifecycle]") {
  TempDir dir;
  auto db = store::ResultsDb::open(dir.file("r.db"));
  const auto study = store::create_or_get_study(db, "steps", nlohmann::json::object(), "step_time_ms:min,size:min");
  auto config = trial_config(experiment(), 5);
  config["step"] = {{"length", 8}, {"warmup", 0}, {"repeats", 1}};
  store::enqueue_trials(db, study, {config});
  const auto trial = store::claim_next_trial(db, study.id, "w", current_environment());
  REQUIRE(trial);
  std::vector<std::string> said;
  ClaimedTrialOptions o;
  o.on_message = [&](const std::string& text) { said.push_back(text); };
  CHECK(run_claimed_trial(db, *trial, "w", o) == store::TrialState::Complete);
  const auto ended = store::load_trial(db, trial->id);
  CHECK(ended->state == store::TrialState::Complete);
  const auto objectives = store::read_objectives(db.sql(), trial->id);
  CHECK(objectives.at("step_time_ms") > 0);
  CHECK(objectives.at("compression") > 1);
  REQUIRE(said.size() == 1);

  // A config the experiment reader refuses ends the trial failed with its error.
  config["experiment"]["training"]["batch_size"] = 0;
  store::enqueue_trials(db, study, {config});
  const auto bad = store::claim_next_trial(db, study.id, "w", current_environment());
  REQUIRE(bad);
  CHECK(run_claimed_trial(db, *bad, "w", o) == store::TrialState::Failed);
  CHECK_THAT(store::load_trial(db, bad->id)->error, Catch::Matchers::Contains("training.batch_size"));
}

TEST_CASE("a trained trial whose end cannot be recorded ends failed with the reason, not running",
          "[lifecycle]") {
  TempDir dir;
  auto db = store::ResultsDb::open(dir.file("r.db"));
  // An objective no training trial records (a sweep spec refuses it; an older database may hold it).
  const auto study = store::create_or_get_study(db, "odd", nlohmann::json::object(), "made_up:min");
  auto e = experiment();
  e["training"]["epochs"] = 1;
  store::enqueue_trials(db, study, {trial_config(e, 5)});
  const auto trial = store::claim_next_trial(db, study.id, "w", current_environment());
  REQUIRE(trial);
  const auto data = testing::pairs_data(testing::synthetic_pairs(8, 1), testing::synthetic_pairs(4, 2));
  ClaimedTrialOptions o;
  o.data = [&](const DataConfig&) -> const TaskData& { return data; };
  CHECK(run_claimed_trial(db, *trial, "w", o) == store::TrialState::Failed);
  const auto ended = store::load_trial(db, trial->id);
  CHECK(ended->state == store::TrialState::Failed);
  CHECK_THAT(ended->error, Catch::Matchers::Contains("its end could not be recorded") &&
                               Catch::Matchers::Contains("made_up"));
}

TEST_CASE("the heartbeat goes on without steps, from its own connection, and notices a lost claim",
          "[lifecycle]") {
  TempDir dir;
  const auto path = dir.file("r.db");
  auto db = store::ResultsDb::open(path);
  const auto [study, trial] = claimed(db, experiment());
  auto beat_at = [&] { return store::load_trial(db, trial.id)->heartbeat_at; };
  const auto first = beat_at();
  std::atomic<bool> lost{false};
  {
    ClaimHeartbeat heartbeat(path, trial.id, "w", std::chrono::milliseconds(20), &lost);
    // No step, no epoch: the thread alone moves the heartbeat on (SQLite's clock has ms).
    bool moved = false;
    for (int i = 0; i < 500 && !moved; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      moved = beat_at() != first;
    }
    CHECK(moved);
    CHECK_FALSE(lost);
    // Declared stale and claimed by another worker: the claim is lost.
    REQUIRE(store::requeue_trial(db, trial.id, store::TrialState::Running, "w"));
    REQUIRE(store::claim_next_trial(db, study.id, "w2", current_environment()));
    for (int i = 0; i < 500 && !lost; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    CHECK(lost);
  }
  CHECK(store::load_trial(db, trial.id)->worker == "w2");
}

namespace {

// A run of `epochs` epochs recording into a claimed trial, taken from it (declared stale and
// claimed by "w2") once it has recorded `before` epochs; its heartbeat beats every `beat`.
struct LostRun {
  std::string error;             // what run() threw
  size_t at_takeover = 0, at_end = 0;  // epochs recorded then
  std::optional<store::Trial> trial;   // afterwards
};

LostRun lose_claim(int64_t epochs, size_t before, std::chrono::milliseconds beat) {
  TempDir dir;
  const auto path = dir.file("r.db");
  auto db = store::ResultsDb::open(path);
  auto e = experiment();
  e["training"]["epochs"] = epochs;
  const auto [study, trial] = claimed(db, e);
  const auto data = testing::pairs_data(testing::synthetic_pairs(8, 1), testing::synthetic_pairs(4, 2));
  RecordedRunOptions o;
  o.heartbeat_interval = beat;
  RecordedRun run(parse_experiment(e), data, o, &db);
  run.record_in(db, trial.id, "w");
  LostRun out;
  std::thread thief([&, id = trial.id, study_id = study.id] {
    auto other = store::ResultsDb::open(path);
    while (store::read_epochs(other.sql(), id).size() < before) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    store::requeue_trial(other, id, store::TrialState::Running, "w");
    store::claim_next_trial(other, study_id, "w2", current_environment());
    out.at_takeover = store::read_epochs(other.sql(), id).size();
  });
  try {
    run.run();
  } catch (const std::exception& ex) {
    out.error = error_message(ex);
  }
  thief.join();
  out.at_end = store::read_epochs(db.sql(), trial.id).size();
  out.trial = store::load_trial(db, trial.id);
  return out;
}

}  // namespace

TEST_CASE("a run whose trial is claimed elsewhere stops and records nothing over the new holder's",
          "[lifecycle]") {
  // Its heartbeat notices first; it ends by losing its claim long before its epochs.
  const auto lost = lose_claim(100000, 1, std::chrono::milliseconds(20));
  CHECK_THAT(lost.error, Catch::Matchers::Contains("is no longer this worker's"));
  CHECK(lost.trial->state == store::TrialState::Running);
  CHECK(lost.trial->worker == "w2");
}

TEST_CASE("a run that lost its claim records no epoch into the trial, even before its heartbeat notices",
          "[lifecycle]") {
  // Only the records can notice; left whole, the run would write epochs past the takeover.
  const auto lost = lose_claim(30, 2, std::chrono::hours(1));
  CHECK_THAT(lost.error, Catch::Matchers::Contains("is no longer this worker's"));
  CHECK(lost.at_end == lost.at_takeover);
  CHECK(lost.trial->worker == "w2");
}
