// training.fixed_ranks (the ablation against rank adaptation): the model starts at the given
// ranks with values drawn afresh at those ranks, keeps them while it trains, and a layer given
// an empty bond stays empty; settings that would change ranks are refused; and
// `comera train --fixed-ranks` starts where an adaptive run's --json result ended.
#include "core/layers/size.h"
#include "core/layers/tt_linear.h"
#include "core/training/experiment.h"
#include "core/training/param_groups.h"
#include "core/training/rank_truncation.h"
#include "core/training/trainer.h"
#include "core/util/config_reader.h"
#include "core/util/error.h"
#include "core/util/process.h"
#include "core/util/source_dir.h"
#include "tests/support/catch.h"
#include "tests/support/cli_process.h"
#include "tests/support/quickstart_db.h"
#include "tests/support/temp_dir.h"
#include "tests/support/tiny_trainer.h"

#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <cmath>
#include <fstream>

using namespace comera;
using Catch::Matchers::Contains;

namespace {

TrainConfig fixed_training(std::map<std::string, std::vector<int64_t>> ranks) {
  TrainConfig c = testing::tiny_training();
  c.early.gamma = 0;
  c.late.enabled = false;
  c.truncation.when = TruncateWhen::Never;
  c.optimizer.lr_ranks = 0;
  c.fixed_ranks = std::move(ranks);
  return c;
}

}  // namespace

TEST_CASE("fixed ranks: drawn afresh at the given ranks, kept while training; an empty bond stays empty",
          "[training][fixed_ranks]") {
  const auto train = testing::synthetic_pairs(24, 1), eval = testing::synthetic_pairs(8, 2);
  // The configured ranks (3 at every interior bond) of an unchanged model, with its values.
  Trainer plain(testing::tiny_model(), fixed_training({}), testing::pairs_data(train, eval));
  const auto configured = allocated_ranks(plain.model());
  REQUIRE(configured.size() >= 4);
  std::map<std::string, std::vector<int64_t>> wanted;
  std::string emptied;
  for (const auto& [name, ranks] : configured) {
    auto r = ranks;
    for (size_t k = 1; k + 1 < r.size(); ++k) r[k] = 2;
    if (emptied.empty() && name.find("ffn_in") != std::string::npos) {
      r[1] = 0;
      emptied = name;
    }
    wanted[name] = r;
  }
  REQUIRE_FALSE(emptied.empty());

  Trainer fixed(testing::tiny_model(), fixed_training(wanted), testing::pairs_data(train, eval));
  double z_squares = 0;
  int64_t entries = 0;
  for (const auto& [name, layer] : tensorized_layers(fixed.model())) {
    INFO(name);
    if (name == emptied) {
      CHECK(exact_size(*layer) == 0);
      continue;
    }
    CHECK(layer->chain().ranks() == wanted.at(name));
    for (const auto& d : layer->rank_vectors()) CHECK(d.eq(1).all().item<bool>());
    // Drawn afresh, not the leading slices of the full-rank draw: TTLinear's σ_k = s / sqrt(r_k)
    // with s = (in + out)^(-1/(4d)), at the new ranks.
    auto* tt = dynamic_cast<TTLinearImpl*>(layer);
    if (!tt) continue;
    const auto& shape = tt->shape();
    const double s = std::pow(1.0 / static_cast<double>(shape.in_features() + shape.out_features()),
                              1.0 / (4.0 * static_cast<double>(shape.d())));
    const auto cores = layer->cores();
    for (size_t k = 0; k < cores.size(); ++k) {
      const double sigma = s / std::sqrt(static_cast<double>(shape.ranks()[k + 1]));
      z_squares += cores[k].to(at::kDouble).div(sigma).pow(2).sum().item<double>();
      entries += cores[k].numel();
    }
  }
  REQUIRE(entries > 100);
  CHECK(z_squares / static_cast<double>(entries) == Approx(1.0).margin(0.3));
  for (const auto& [name, layer] : tensorized_layers(plain.model()))
    if (name != emptied) {
      const auto fresh = tensorized_layers(fixed.model());
      for (const auto& [other, kept] : fresh)
        if (other == name) {
          const auto a = kept->cores().front();
          const auto b = layer->cores().front().narrow(-1, 0, a.size(-1));
          CHECK_FALSE(at::allclose(a, b));
        }
    }

  const auto before = allocated_ranks(fixed.model());
  const auto result = fixed.run();
  REQUIRE(result.status == RunStatus::Completed);
  CHECK(allocated_ranks(fixed.model()) == before);
  for (const auto& [name, layer] : tensorized_layers(fixed.model()))
    if (name != emptied)
      for (const auto& d : layer->rank_vectors()) CHECK(d.eq(1).all().item<bool>());
  for (const auto& epoch : result.epochs) CHECK(epoch.size.total_params == result.epochs.front().size.total_params);
}

TEST_CASE("fixed ranks refuse what would change ranks, and malformed lists", "[training][fixed_ranks]") {
  auto config = [](nlohmann::json training) {
    training["epochs"] = 2;
    training["fixed_ranks"] = training.value("fixed_ranks", nlohmann::json{{"layer", {1, 2, 1}}});
    return read_train_config(ConfigReader(training, "training"));
  };
  CHECK_THROWS_WITH(config({{"early_stage", {{"gamma", 0.01}}}}),
                    Contains("training.fixed_ranks keeps every rank") && Contains("early_stage.gamma") &&
                        Contains("truncation.when") && Contains("optimizer.lr_ranks") && Contains("--fixed-ranks"));
  const nlohmann::json keeps = {{"early_stage", {{"gamma", 0}}},
                                {"truncation", {{"when", "never"}}},
                                {"optimizer", {{"lr_ranks", 0}}}};
  CHECK(config(keeps).fixed_ranks.at("layer") == std::vector<int64_t>{1, 2, 1});
  auto late = keeps;
  late["late_stage"] = {{"start_epoch", 1}};
  CHECK_THROWS_WITH(config(late), Contains("late_stage is set"));
  auto bad = keeps;
  bad["fixed_ranks"] = {{"layer", {2, 3}}};
  CHECK_THROWS_WITH(config(bad), Contains("training.fixed_ranks.layer") && Contains("boundary 1s"));
  bad["fixed_ranks"] = {{"layer", {1, -1, 1}}};
  CHECK_THROWS_WITH(config(bad), Contains("training.fixed_ranks.layer"));
}

TEST_CASE("comera train --fixed-ranks starts at an adaptive run's final ranks and keeps them",
          "[training][fixed_ranks][cli]") {
  comera::testing::TempDir dir;
  const std::string data = dir.file("wordnet");
  comera::testing::run_from_root("data build-wordnet --source " + source_dir() + "/tests/fixtures/wordnet --out " + data);
  const std::string config = source_dir() + "/experiments/sweeps/quickstart_base.json";
  auto train = [&](const std::vector<std::string>& more, const std::string& checkpoint) {
    std::vector<std::string> argv = {comera::testing::cli_path(), "train", "--config", config, "--data", data, "--no-db",
                                     "--quiet", "--json", "--checkpoint", dir.file(checkpoint)};
    argv.insert(argv.end(), more.begin(), more.end());
    const auto r = run_process(argv, "comera train", ErrorOutput::Discard);
    REQUIRE(r.status == 0);
    return nlohmann::json::parse(r.output);
  };
  const auto adaptive = train({}, "a.pt");
  std::ofstream(dir.file("adaptive.json")) << adaptive.dump();
  const auto fixed = train({"--fixed-ranks", dir.file("adaptive.json")}, "f.pt");
  CHECK(fixed["experiment"]["name"] == adaptive["experiment"]["name"].get<std::string>() + "_fixed_ranks");
  CHECK_FALSE(fixed["experiment"]["training"].contains("late_stage"));
  const auto& ended = adaptive["epochs"].back()["layers"];
  for (const auto& epoch : fixed["epochs"]) CHECK(epoch["layers"] == ended);
  CHECK(fixed["epochs"].back()["size"] == adaptive["epochs"].back()["size"]);

  const auto both = run_process({comera::testing::cli_path(), "train", "--config", config, "--dense", "--fixed-ranks",
                                 dir.file("adaptive.json")},
                                "comera train", ErrorOutput::Merge);
  CHECK(both.status != 0);
  CHECK_THAT(both.output, Contains("leave out --dense"));
}
