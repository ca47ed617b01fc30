// Runs you can trust: each defect a user found (issue "Runs you can trust"), one test each, all of
// which failed on the code before the fix: wrong records, divergence that overwrote the last
// good checkpoint, resumes under changed settings, errors found only after the work, checkpoint
// collisions, contraction policies that nothing acted on, command-line overrides that skipped
// the file's checks.
#include "core/contract/plan.h"
#include "core/data/pair_dataset.h"
#include "core/layers/tt_linear.h"
#include "core/models/model_kind.h"
#include "core/training/checkpoint.h"
#include "core/training/experiment.h"
#include "core/training/trainer.h"
#include "core/util/process.h"
#include "core/util/source_dir.h"
#include "search/runs/recorded_run.h"
#include "tests/support/catch.h"
#include "tests/support/cli_process.h"
#include "tests/support/temp_dir.h"

#include <ATen/ATen.h>
#include <torch/nn/module.h>
#include <unistd.h>

#include <fstream>
#include <limits>
#include <random>

using namespace comera;
using Catch::Matchers::Contains;
using comera::testing::TempDir;

namespace {

// Pairs labelled by their first token modulo 3.
std::shared_ptr<PairDataset> pairs(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<EncodedTokens> out;
  for (int64_t i = 0; i < n; ++i) {
    EncodedTokens p;
    p.input_ids = {1, 3 + static_cast<int64_t>(rng() % 40), 4 + static_cast<int64_t>(rng() % 40), 2};
    p.segment_ids.assign(p.input_ids.size(), 0);
    p.input_ids.insert(p.input_ids.end(), {5 + static_cast<int64_t>(rng() % 40), 2});
    p.segment_ids.resize(p.input_ids.size(), 1);
    p.label = p.input_ids[1] % 3;
    out.push_back(std::move(p));
  }
  return std::make_shared<PairDataset>(std::move(out), 0);
}

TaskData data(int64_t train = 10, int64_t eval = 4) {
  TaskData d{pairs(train, 1), pairs(eval, 2), {}, "", ""};
  d.info.vocab_size = 50;
  d.info.classes = 3;
  d.info.segments = 2;
  return d;
}

nlohmann::json model_json(int64_t classes = 3, int64_t segments = 2) {
  return {{"vocab", 50}, {"d_model", 8}, {"heads", 2}, {"layers", 1}, {"ffn", 16},
          {"max_positions", 16}, {"classes", classes}, {"segments", segments}, {"dropout", 0.0},
          {"tensorized",
           {{"attention", {{"in_modes", {4, 2}}, {"out_modes", {2, 4}}, {"ranks", 3}}},
            {"ffn_in", {{"in_modes", {4, 2}}, {"out_modes", {4, 4}}, {"ranks", 3}}},
            {"classifier", {{"in_modes", {4, 2}}, {"out_modes", {2, 4}}, {"ranks", 3}}}}}};
}

// 2 epochs of 2 steps (10 pairs, batch 5).
TrainConfig training(int64_t epochs = 2) {
  TrainConfig c;
  c.epochs = epochs;
  c.batch_size = 5;
  c.seed = 3;
  c.optimizer.lr_cores = c.optimizer.lr_ranks = c.optimizer.lr_other = 0.01;
  return c;
}

TrainerOptions with_checkpoint(const std::string& checkpoint, bool resume = false) {
  TrainerOptions o;
  o.checkpoint = checkpoint;
  o.resume = resume;
  return o;
}

void poison(torch::nn::Module& model) {
  at::NoGradGuard no_grad;
  model.parameters().front().fill_(std::numeric_limits<double>::quiet_NaN());
}

bool finite(torch::nn::Module& model) {
  for (const auto& p : model.parameters())
    if (!at::isfinite(p).all().item<bool>()) return false;
  return true;
}

// A tiny experiment on the MNLI fixture, written into `dir`: one epoch of batches of 2.
std::string write_experiment(const TempDir& dir) {
  const auto experiment = dir.file("tiny.json");
  std::ofstream(experiment) << nlohmann::json{
      {"name", "tiny"},
      {"model", [] {
         auto m = model_json();
         m["vocab"] = 30522;  // the BERT vocabulary the fixture is read with
         return m;
       }()},
      {"training", {{"epochs", 1}, {"batch_size", 2}}},
      {"data", {{"dir", comera::source_dir() + "/tests/fixtures/mnli"}, {"train", "train.tsv"},
                {"eval", "dev_matched.tsv"}, {"max_length", 16}}}}
      .dump();
  return experiment;
}

}  // namespace

TEST_CASE("an empty evaluation set is an error before training, not a complete run with loss 0",
          "[trusted_runs]") {
  auto d = data();
  d.eval = std::make_shared<PairDataset>(std::vector<EncodedTokens>{}, 0);
  CHECK_THROWS_WITH(Trainer(parse_model_spec(model_json()), training(), d),
                    Contains("the evaluation set is empty"));
}

TEST_CASE("parameters that turn non-finite at the last step end the run diverged, and the last "
          "finite checkpoint is kept",
          "[trusted_runs]") {
  TempDir dir;
  const auto file = dir.file("run.pt");
  auto options = with_checkpoint(file);
  torch::nn::Module* model = nullptr;
  int64_t steps = 0;
  options.on_step = [&] {
    if (++steps == 4) poison(*model);  // the last step of the run
  };
  Trainer t(parse_model_spec(model_json()), training(), data(), options);
  model = &t.model();
  const auto r = t.run();
  CHECK(r.status == RunStatus::Diverged);
  CHECK_THAT(r.message, Contains("non-finite") &&
                            Contains("checkpoint " + file + " (step 2, the last with finite parameters) is kept"));
  REQUIRE(r.epochs.size() == 1);  // the poisoned epoch is not reported as a result
  // The checkpoint on disk is the epoch-1 one, finite.
  const Checkpoint kept(file);
  CHECK(kept.state().step == 2);
  Trainer fresh(parse_model_spec(model_json()), training(), data());
  kept.load_model(fresh.model());
  CHECK(finite(fresh.model()));
}

TEST_CASE("a run that diverges before any checkpoint says that none was written", "[trusted_runs]") {
  TempDir dir;
  auto options = with_checkpoint(dir.file("never.pt"));
  torch::nn::Module* model = nullptr;
  options.on_step = [&] { poison(*model); };
  Trainer t(parse_model_spec(model_json()), training(), data(), options);
  model = &t.model();
  const auto r = t.run();
  CHECK(r.status == RunStatus::Diverged);
  CHECK_THAT(r.message, Contains("no checkpoint was written"));
  CHECK_FALSE(std::filesystem::exists(dir.file("never.pt")));
}

TEST_CASE("resuming under changed training settings is refused, naming what changed",
          "[trusted_runs]") {
  TempDir dir;
  const auto file = dir.file("run.pt");
  {
    Trainer t(parse_model_spec(model_json()), training(1), data(), with_checkpoint(file));
    REQUIRE(t.run().status == RunStatus::Completed);
  }
  auto changed = training(2);
  changed.optimizer.lr_other = 0.02;
  CHECK_THROWS_WITH(Trainer(parse_model_spec(model_json()), changed, data(), with_checkpoint(file, true)),
                    Contains("epochs 1 -> 2") && Contains("optimizer.lr_other 0.01 -> 0.02") &&
                        Contains("start a new run"));
}

TEST_CASE("a model with fewer classes or segments than the data is an error before training",
          "[trusted_runs]") {
  CHECK_THROWS_WITH(Trainer(parse_model_spec(model_json(2)), training(), data()),
                    Contains("model.classes: 2 but the data has 3 classes"));
  CHECK_THROWS_WITH(Trainer(parse_model_spec(model_json(3, 1)), training(), data()),
                    Contains("model.segments: 1 but the data has 2 segments"));
}

TEST_CASE("an unwritable checkpoint folder is an error before training", "[trusted_runs]") {
  CHECK_THROWS_WITH(Trainer(parse_model_spec(model_json()), training(), data(), with_checkpoint("/dev/null/x/run.pt")),
                    Contains("cannot write checkpoints to /dev/null/x"));
}

TEST_CASE("a checkpoint in use by another run is refused, naming its holder", "[trusted_runs]") {
  TempDir dir;
  const auto file = dir.file("run.pt");
  Trainer first(parse_model_spec(model_json()), training(), data(), with_checkpoint(file));
  CHECK_THROWS_WITH(Trainer(parse_model_spec(model_json()), training(), data(), with_checkpoint(file, true)),
                    Contains("is in use by another run (process " + std::to_string(getpid())));
}

TEST_CASE("every contraction policy acts on the TT layers and trains to the same losses",
          "[trusted_runs]") {
  ExperimentConfig e;
  e.model = parse_model_spec(model_json());
  e.training = training();
  double merged_loss = 0;
  for (const std::string policy : {"merged", "core-by-core", "reconstruct", "stored"}) {
    INFO(policy);
    e.training.contraction = policy;
    RecordedRun run(e, data(), {});
    const auto r = run.run();
    REQUIRE(r.status == RunStatus::Completed);
    int layers = 0;
    for (const auto& item : run.trainer().model().named_modules())
      if (const auto* tt = dynamic_cast<const TTLinearImpl*>(item.value().get())) {
        ++layers;
        const bool named = policy == "core-by-core" || policy == "reconstruct";
        CHECK((tt->plan() ? tt->plan()->name : std::string("merged")) ==
              (named ? policy : std::string("merged")));
      }
    CHECK(layers == 6);
    // One mathematics, several orders: equal up to float32 rounding.
    if (policy == "merged") merged_loss = r.epochs.back().eval_loss;
    CHECK(r.epochs.back().eval_loss == Approx(merged_loss).epsilon(1e-4));
  }
}

TEST_CASE("command-line overrides go through the file's checks, and each config and seed has "
          "its own default checkpoint",
          "[trusted_runs][cli]") {
  TempDir dir;
  const auto experiment = write_experiment(dir);
  for (const auto& [flag, key] : {std::pair<std::string, std::string>{"--epochs 0", "training.epochs"},
                                  {"--max-steps -5", "training.max_steps"},
                                  {"--train-limit -5", "data.train_limit"},
                                  {"--eval-limit -1", "data.eval_limit"}}) {
    const auto r = comera::testing::run_cli("train --no-db --config " + experiment + " " + flag);
    INFO(r.output);
    CHECK(r.status != 0);
    CHECK_THAT(r.output, Contains(key) && Contains("with the command line's " + flag));
  }
  // Two seeds of one config: two default checkpoints (the second used to crash at its first
  // epoch end on the first's temporary file).
  auto checkpoint_of = [&](const std::string& seed) {
    const auto r = run_process({"/bin/sh", "-c",
                                "cd " + dir.file("") + " && " + comera::testing::cli_path() +
                                    " train --no-db --quiet --json --config " + experiment + " --seed " + seed},
                               "comera", ErrorOutput::Discard);
    REQUIRE(r.status == 0);
    return nlohmann::json::parse(r.output).at("checkpoint").get<std::string>();
  };
  const auto one = checkpoint_of("1"), two = checkpoint_of("2");
  CHECK(one != two);
  CHECK(std::filesystem::exists(dir.file(one)));
  CHECK(std::filesystem::exists(dir.file(two)));
}

TEST_CASE("the dense baseline of an experiment with a late stage trains on its task loss "
          "throughout",
          "[trusted_runs][cli]") {
  // Dense, max{L - L0, S - S0} has no size to trade and is flat once L < L0: a late stage would
  // leave the baseline learning at rho times its rate.
  TempDir dir;
  const auto experiment = dir.file("late.json");
  auto model = model_json();
  model["vocab"] = 30522;
  std::ofstream(experiment) << nlohmann::json{
      {"name", "late"},
      {"model", model},
      {"training", {{"epochs", 2}, {"batch_size", 2}, {"late_stage", {{"start_epoch", 1}, {"loss_target", 50}}}}},
      {"data", {{"dir", comera::source_dir() + "/tests/fixtures/mnli"}, {"train", "train.tsv"},
                {"eval", "dev_matched.tsv"}, {"max_length", 16}}}}
      .dump();
  auto stages = [&](const std::string& flags) {
    const auto r = run_process({"/bin/sh", "-c", "cd " + dir.file("") + " && " + comera::testing::cli_path() +
                                                     " train --no-db --quiet --json --config " + experiment + flags},
                               "comera", ErrorOutput::Discard);
    REQUIRE(r.status == 0);
    const auto result = nlohmann::json::parse(r.output);
    std::vector<std::string> out;
    for (const auto& e : result.at("epochs")) out.push_back(e.at("stage"));
    return out;
  };
  CHECK(stages("") == std::vector<std::string>{"early", "late"});
  CHECK(stages(" --dense") == std::vector<std::string>{"early", "early"});
}

TEST_CASE("train never writes its checkpoint over a file it reads, nor over a run without --resume",
          "[trusted_runs][cli]") {
  TempDir dir;
  const auto experiment = write_experiment(dir);
  const auto config = nlohmann::json::parse(std::ifstream(experiment));
  auto train = [&](const std::string& flags) {
    return comera::testing::run_cli("train --quiet --config " + experiment + " " + flags);
  };
  // A results database and the config itself.
  REQUIRE(train("--db " + dir.file("r.db") + " --checkpoint " + dir.file("a.pt")).status == 0);
  for (const auto& target : {dir.file("r.db"), experiment}) {
    const auto r = train("--db " + dir.file("r.db") + " --checkpoint " + target);
    INFO(r.output);
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("--checkpoint") && Contains("which this command reads") && !Contains("epoch 1"));
  }
  CHECK(nlohmann::json::parse(std::ifstream(experiment)) == config);
  CHECK(comera::testing::run_cli("runs list --db " + dir.file("r.db")).status == 0);
  // A stopped run: refused without --resume, gone on from with it; an ended one is refused too.
  CHECK(train("--no-db --checkpoint " + dir.file("b.pt") + " --stop-at 1").status == 0);
  auto r = train("--no-db --checkpoint " + dir.file("b.pt"));
  CHECK(r.status == 1);
  CHECK_THAT(r.output, Contains("holds a run stopped at step 1 (in epoch 1 of 1): add --resume") && !Contains("epoch 1 ["));
  CHECK(train("--no-db --checkpoint " + dir.file("b.pt") + " --resume").status == 0);
  r = train("--no-db --checkpoint " + dir.file("b.pt"));
  CHECK(r.status == 1);
  CHECK_THAT(r.output, Contains("holds a run that ended at step") && Contains("to train again"));
}

TEST_CASE("train --trial names a trial missing from the database before any work", "[trusted_runs][cli]") {
  TempDir dir;
  const auto r = comera::testing::run_cli("train --quiet --config " + write_experiment(dir) + " --db " +
                                          dir.file("r.db") + " --checkpoint " + dir.file("c.pt") +
                                          " --trial 999 --worker w");
  INFO(r.output);
  CHECK(r.status == 1);
  CHECK_THAT(r.output, Contains("--trial 999: no trial 999 in") && !Contains("loading data"));
}

TEST_CASE("settings that would leave a run's ranks unpruned or its late stage unrun are refused before training",
          "[trusted_runs]") {
  const auto model = parse_model_spec(model_json());
  auto experiment = [](nlohmann::json training, double threshold = 0.01) {
    auto m = model_json();
    m["rank_threshold"] = threshold;
    return parse_experiment({{"name", "t"}, {"model", m}, {"training", training}});
  };
  // Folding set every d back to 1 at each truncation: no entry ever fell under the threshold.
  CHECK_THROWS_WITH(experiment({{"early_stage", {{"gamma", 0.1}}}, {"truncation", {{"fold", true}}}}),
                    Contains("training.truncation.fold") && Contains("no rank is pruned"));
  CHECK(experiment({{"early_stage", {{"gamma", 0}}}, {"truncation", {{"fold", true}}}}).training.truncation.fold);
  // Threshold 0: |d| >= 0 always.
  CHECK_THROWS_WITH(experiment({{"early_stage", {{"gamma", 0.1}}}}, 0),
                    Contains("model.rank_threshold: 0 prunes nothing") && Contains("early_stage.gamma"));
  CHECK_THROWS_WITH(experiment({{"epochs", 2}, {"early_stage", {{"gamma", 0}}}, {"late_stage", {{"start_epoch", 1}}}}, 0),
                    Contains("model.rank_threshold") && Contains("late_stage"));
  CHECK(experiment({{"early_stage", {{"gamma", 0}}}}, 0).training.early.gamma == 0);
  // Both starts: start_epoch was ignored.
  CHECK_THROWS_WITH(experiment({{"epochs", 3}, {"late_stage", {{"start_epoch", 1}, {"start_step", 7}}}}),
                    Contains("training.late_stage") && Contains("both say when") && Contains("give one"));

  // 2 epochs of 2 steps: a late stage from step 4, or a max_steps of 2 before step 2, never runs.
  auto late = training();
  late.late.enabled = true;
  late.late.start_step = 4;
  CHECK_THROWS_WITH(Trainer(model, late, data()),
                    Contains("training.late_stage.start_step 4 is past the run's last step (4 steps in 2 epochs)"));
  late.late.start_step = 2;
  late.max_steps = 2;
  CHECK_THROWS_WITH(Trainer(model, late, data()),
                    Contains("training.max_steps 2 ends the run before its late stage starts (step 2)"));
  late.late.start_step = 0;
  late.late.start_epoch = 1;
  CHECK_THROWS_WITH(Trainer(model, late, data()), Contains("(step 2)"));
  late.max_steps = 3;
  CHECK_NOTHROW(Trainer(model, late, data()));
}
