// The extension points share one registry shape (core/util/registry.h): a data format and an
// optimiser added from this file, each owning its settings, are read from an experiment and
// train like the built-in ones.
#include "core/data/data_format.h"
#include "core/training/experiment.h"
#include "core/training/optimizer.h"
#include "core/training/optimizer_kind.h"
#include "core/training/optimizer_groups.h"
#include "core/training/sliceable_optimizer.h"
#include "core/training/trainer.h"
#include "core/util/config_reader.h"
#include "core/util/registry.h"
#include "support/catch.h"
#include "support/tiny_trainer.h"

#include <torch/torch.h>

using namespace comera;
using namespace comera::testing;
using Catch::Matchers::Contains;

namespace {

struct Named {
  std::string label;
  std::string name() const { return label; }
};

// Pairs made in memory (tiny_trainer.h), as many as the format's own key "pairs" says.
class MemoryPairs : public DataFormat {
 public:
  std::string name() const override { return "memory-pairs"; }
  std::string default_train() const override { return "-"; }
  std::string default_eval() const override { return "-"; }
  std::vector<std::string> keys() const override { return {"pairs"}; }
  nlohmann::json read(const ConfigReader& data, const DataConfig&) const override {
    return {{"pairs", data.integer("pairs", 30, 4)}};
  }
  TaskData load(const DataConfig& config) const override {
    const int64_t n = config.settings.at("pairs");
    auto data = pairs_data(synthetic_pairs(n, 5), synthetic_pairs(n / 2, 6));
    data.info.vocab_size = 50;
    data.info.max_length = 16;
    data.info.classes = 3;
    data.info.segments = 2;
    return data;
  }
  void require_files(const DataConfig&) const override {}  // made in memory: none
  std::string folder(const DataConfig&) const override { return ""; }
};

// SignSGD: p -= lr * sign(grad). Stateless, so rank truncation has nothing to cut; it counts
// its steps so the test can see that it ran.
class SignSGD : public torch::optim::Optimizer, public SliceableOptimizer {
 public:
  SignSGD(std::vector<torch::optim::OptimizerParamGroup> groups, double scale)
      : torch::optim::Optimizer(std::move(groups), std::make_unique<torch::optim::SGDOptions>(1.0)),
        scale_(scale) {}
  torch::Tensor step(LossClosure) override {
    at::NoGradGuard no_grad;
    for (auto& group : param_groups())
      for (auto& p : group.params())
        if (p.grad().defined()) p.add_(p.grad().sign(), -group.options().get_lr() * scale_);
    ++steps;
    return {};
  }
  void slice_state(const std::vector<ParamSlice>&) override {}
  static inline int64_t steps = 0;

 private:
  double scale_;
};

class SignSGDKind : public OptimizerKind {
 public:
  std::string name() const override { return "signsgd"; }
  nlohmann::json read(const ConfigReader& o) const override { return {{"scale", o.number("scale", 1, 1e-9)}}; }
  std::unique_ptr<torch::optim::Optimizer> make(const torch::nn::Module&, const ParameterGroups& groups,
                                                const OptimizerConfig& config) const override {
    return std::make_unique<SignSGD>(torch_groups(groups, config.rates(), torch::optim::SGDOptions(1.0)),
                                     config.complete_settings().at("scale").get<double>());
  }
};

void register_once() {
  static const bool done = [] {
    register_data_format(std::make_shared<MemoryPairs>());
    register_optimizer_kind(std::make_shared<SignSGDKind>());
    return true;
  }();
  (void)done;
}

nlohmann::json experiment(nlohmann::json data, nlohmann::json optimizer) {
  auto model = tiny_config().to_json();
  model["dropout"] = 0;
  return {{"name", "registered"},
          {"model", model},
          {"training", {{"epochs", 4}, {"batch_size", 6}, {"seed", 3}, {"optimizer", optimizer}}},
          {"data", data}};
}

}  // namespace

TEST_CASE("a registry finds entries by name and refuses a name twice", "[registries]") {
  Registry<Named> r("widget", {std::make_shared<Named>(Named{"b"}), std::make_shared<Named>(Named{"a"})});
  CHECK(r.names() == std::vector<std::string>{"a", "b"});
  CHECK(r.find("b").label == "b");
  CHECK_THROWS_WITH(r.find("c"), Contains("unknown widget 'c' (known: a, b)"));
  CHECK_THROWS_WITH(r.add(std::make_shared<Named>(Named{"a"})), Contains("widget 'a' is registered already"));
  CHECK_THROWS_WITH(register_data_format(pairs_format()), Contains("data format 'pairs' is registered already"));
}

TEST_CASE("a data format and an optimiser registered from a test file train", "[registries]") {
  register_once();
  CHECK(find_data_format("memory-pairs").name() == "memory-pairs");
  const auto e = parse_experiment(experiment({{"format", "memory-pairs"}, {"pairs", 36}},
                                             {{"kind", "signsgd"}, {"scale", 0.5}, {"lr_cores", 0.002},
                                              {"lr_ranks", 0.002}, {"lr_other", 0.002}}));
  // Each owns its settings, and the stored config carries them.
  const auto stored = e.to_json();
  CHECK(stored["data"]["pairs"] == 36);
  CHECK(stored["training"]["optimizer"]["scale"] == 0.5);
  CHECK(parse_experiment(stored).to_json() == stored);

  SignSGD::steps = 0;
  Trainer trainer(e.model, e.training, load_task_data(e.data));
  const auto result = trainer.run();
  // 36 pairs in batches of 6 for 4 epochs.
  CHECK(SignSGD::steps == 24);
  REQUIRE(result.epochs.size() == 4);
  CHECK(result.epochs.back().train_loss < result.epochs.front().train_loss);
}

TEST_CASE("a registered entry's keys are its own: errors name them", "[registries]") {
  register_once();
  CHECK_THROWS_WITH(parse_experiment(experiment({{"format", "memory-pairs"}, {"pairs", 2}}, {{"kind", "adamw"}})),
                    Contains("data.pairs"));
  CHECK_THROWS_WITH(parse_experiment(experiment({{"format", "text"}, {"pairs", 36}}, {{"kind", "adamw"}})),
                    Contains("data.pairs: a setting of data.format memory-pairs; data.format text has none"));
  CHECK_THROWS_WITH(parse_experiment(experiment({{"format", "memory-pairs"}}, {{"kind", "signsgd"}, {"betas", {0.9, 0.9}}})),
                    Contains("training.optimizer.betas"));
  CHECK_THROWS_WITH(parse_experiment(experiment({{"format", "memory-pairs"}}, {{"kind", "signsgd"}, {"scale", 0}})),
                    Contains("training.optimizer.scale"));
  CHECK_THROWS_WITH(parse_experiment(experiment({{"format", "nope"}}, {{"kind", "adamw"}})),
                    Contains("data.format") && Contains("memory-pairs"));
}
