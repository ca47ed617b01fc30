// The training core's seams: a model kind and task defined only in this file train through the
// unchanged trainer, checkpoint and resume; the optimiser factory's SGD and Adagrad against
// hand-computed updates; every optimiser's state slicing against a run that only masks; config
// errors for kinds, tasks, optimisers and devices.
#include "core/data/dataset.h"
#include "core/layers/size.h"
#include "core/layers/tt_linear.h"
#include "core/layers/ttm_embedding.h"
#include "core/models/model_kind.h"
#include "core/training/experiment.h"
#include "core/training/optimizer.h"
#include "core/training/param_groups.h"
#include "core/training/rank_truncation.h"
#include "core/training/sliceable_optimizer.h"
#include "core/training/trainer.h"
#include "core/training/training_step.h"
#include "core/util/config_reader.h"
#include "core/util/error.h"
#include "tests/support/catch.h"
#include "tests/support/same_parameters.h"
#include "tests/support/temp_dir.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/optimizer.h>
#include <torch/optim/sgd.h>

#include <cmath>

using namespace comera;
using comera::testing::check_same_parameters;
using Catch::Matchers::Contains;

namespace {

// Points in 8 dimensions labelled by which of 4 fixed directions they lean to most.
class ToyDataset : public Dataset {
 public:
  ToyDataset(int64_t n, uint64_t seed) {
    auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
    x_ = at::randn({n, 8}, gen, at::kDouble);
    auto directions = at::randn({8, 4}, at::make_generator<at::CPUGeneratorImpl>(99), at::kDouble);
    y_ = x_.matmul(directions).argmax(1);
  }
  int64_t size() const override { return x_.size(0); }
  std::string unit() const override { return "points"; }
  Batch batch(const std::vector<int64_t>& indices) const override {
    const auto index = at::tensor(indices, at::kLong);
    Batch b(static_cast<int64_t>(indices.size()));
    b.set("x", x_.index_select(0, index));
    b.set("y", y_.index_select(0, index));
    return b;
  }

 private:
  at::Tensor x_, y_;
};

// One layer, TT (modes [2,4] -> [2,2]) or dense, in float64.
class ToyNetImpl : public torch::nn::Module {
 public:
  ToyNetImpl(bool tensorized, int64_t rank, double threshold) {
    if (tensorized)
      layer_ = register_module(
          "layer", TTLinear(TTLinearOptions({2, 4}, {2, 2}, {1, 2, rank, 2, 1}).threshold(threshold)).ptr());
    else
      layer_ = register_module("layer", torch::nn::Linear(8, 4).ptr());
    to(at::kDouble);
  }
  at::Tensor forward(const at::Tensor& x) {
    if (auto* tt = dynamic_cast<TTLinearImpl*>(layer_.get())) return tt->forward(x);
    return dynamic_cast<torch::nn::LinearImpl&>(*layer_).forward(x);
  }

 private:
  std::shared_ptr<torch::nn::Module> layer_;
};
TORCH_MODULE(ToyNet);

class ToyTask : public Task {
 public:
  ToyTask(bool tensorized, int64_t rank, double threshold) : net_(tensorized, rank, threshold) {}
  torch::nn::Module& model() override { return *net_; }
  TaskOutput forward(const Batch& b) override {
    const auto logits = net_->forward(b.at("x"));
    TaskOutput out;
    out.loss = at::cross_entropy_loss(logits, b.at("y"));
    out.correct = (logits.argmax(1) == b.at("y")).sum();
    out.tokens = at::scalar_tensor(b.examples(), at::kLong);
    out.predictions = b.examples();
    return out;
  }
  bool is_head(const std::string&) const override { return false; }
  int64_t layer_rows(const std::string&, int64_t batch, int64_t) const override { return batch; }
  Batch synthetic_batch(int64_t batch, int64_t, const at::Generator& gen) const override {
    Batch b(batch);
    b.set("x", at::randn({batch, 8}, gen, at::kDouble));
    b.set("y", at::randint(0, 4, {batch}, gen, at::kLong));
    return b;
  }

 private:
  ToyNet net_;
};

class ToyKind : public ModelKind {
 public:
  std::string name() const override { return "toy"; }
  std::vector<std::string> tasks() const override { return {"lean"}; }
  nlohmann::json read(const ConfigReader& r, const TaskSpec&) const override {
    nlohmann::json j = {{"tensorized", r.boolean("tensorized", true)},
                        {"rank", r.integer("rank", 4, 1, 8)},
                        {"threshold", r.number("threshold", 0.01, 0, 1)}};
    r.finish();
    return j;
  }
  nlohmann::json dense(const nlohmann::json& s) const override {
    auto d = s;
    d["tensorized"] = false;
    return d;
  }
  nlohmann::json body(const nlohmann::json& s) const override { return s; }
  std::string summary(const nlohmann::json& s) const override {
    return s.at("tensorized").get<bool>() ? "one TT layer" : "one dense layer";
  }
  nlohmann::json factorise(const nlohmann::json&, int) const override {
    throw Error("the toy model has one shape");
  }
  std::unique_ptr<Task> build(const nlohmann::json& s, const TaskSpec&, const DataInfo&) const override {
    return std::make_unique<ToyTask>(s.at("tensorized").get<bool>(), s.at("rank").get<int64_t>(),
                                     s.at("threshold").get<double>());
  }
};

// Registered once per process, before any test builds an experiment of kind "toy".
const bool kToyRegistered = [] {
  register_model_kind(std::make_shared<ToyKind>());
  return true;
}();

ExperimentConfig toy_experiment(const std::string& optimizer = "adamw") {
  (void)kToyRegistered;
  return parse_experiment(nlohmann::json{
      {"name", "toy"},
      {"model", {{"kind", "toy"}, {"rank", 4}, {"threshold", 0.3}}},
      {"training",
       {{"task", "lean"}, {"epochs", 4}, {"batch_size", 7}, {"eval_batch_size", 9}, {"seed", 3},
        {"optimizer", {{"kind", optimizer}, {"lr_cores", 0.05}, {"lr_ranks", 0.05}, {"lr_other", 0.05}}},
        {"early_stage", {{"gamma", 0.5}}},
        {"late_stage", {{"start_epoch", 2}, {"size_ratio", 0.5}}}}}});
}

TaskData toy_data() {
  return {std::make_shared<ToyDataset>(60, 1), std::make_shared<ToyDataset>(30, 2), {}, "", ""};
}

TrainerOptions at_checkpoint(const std::string& file, int64_t stop_at = 0) {
  TrainerOptions o;
  o.checkpoint = file;
  o.resume = true;
  o.stop_at_step = stop_at;
  return o;
}


}  // namespace

TEST_CASE("a model kind and task defined outside the project train, checkpoint and resume",
          "[training_core]") {
  for (const std::string optimizer : {"adamw", "sgd", "adagrad"}) {
    INFO(optimizer);
    const testing::TempDir dir;
    const auto e = toy_experiment(optimizer);
    CHECK(e.model.summary() == "one TT layer");
    Trainer full(e.model, e.training, toy_data(), at_checkpoint(dir.file("full.pt")));
    const auto a = full.run();
    REQUIRE(a.status == RunStatus::Completed);
    CHECK(a.steps == 36);  // 4 epochs of 9 batches (the last short)
    CHECK(a.epochs.back().stage == "late");
    if (optimizer == "adamw") {
      CHECK(a.epochs.back().accuracy > 0.4);  // chance is about 1/4
      // Truncation cut the toy layer, so the resume must rebuild its shape.
      CHECK(allocated_ranks(full.model()).begin()->second != std::vector<int64_t>{1, 2, 4, 2, 1});
    }

    // Interrupted twice, once inside an epoch, then resumed by fresh trainers.
    const auto part = dir.file("part.pt");
    for (int64_t stop : {5, 20}) {
      Trainer t(e.model, e.training, toy_data(), at_checkpoint(part, stop));
      CHECK(t.run().status == RunStatus::StepLimit);
    }
    Trainer rest(e.model, e.training, toy_data(), at_checkpoint(part));
    CHECK(rest.resumed());
    const auto b = rest.run();
    REQUIRE(b.status == RunStatus::Completed);
    CHECK(b.epochs.back().eval_loss == a.epochs.back().eval_loss);
    check_same_parameters(full.model(), rest.model());
  }
}

TEST_CASE("SGD and Adagrad steps against hand-computed updates", "[training_core]") {
  // One parameter w = (1, -2) in the "other" group, loss c·w with c = (0.5, 3): gradient c.
  struct OneParam : torch::nn::Module {
    OneParam() { w = register_parameter("w", at::tensor({1.0, -2.0}, at::kDouble)); }
    at::Tensor w;
  };
  auto step = [](OneParam& m, torch::optim::Optimizer& opt) {
    opt.zero_grad();
    (at::tensor({0.5, 3.0}, at::kDouble) * m.w).sum().backward();
    opt.step();
  };
  SECTION("SGD with momentum, dampening and weight decay") {
    OneParam m;
    OptimizerConfig c;
    c.kind = "sgd";
    c.lr_other = 0.1;
    c.settings = {{"momentum", 0.9}, {"dampening", 0.5}};
    c.weight_decay = 0.01;
    auto opt = make_optimizer(m, c);
    step(m, *opt);
    // g = c + 0.01 w = (0.51, 2.98); first buffer = g; w -= 0.1 g.
    CHECK(m.w[0].item<double>() == Approx(1 - 0.051).epsilon(1e-14));
    CHECK(m.w[1].item<double>() == Approx(-2 - 0.298).epsilon(1e-14));
    step(m, *opt);
    // g = c + 0.01 (0.949, -2.298) = (0.50949, 2.97702); buf = 0.9 buf + 0.5 g.
    const double b0 = 0.9 * 0.51 + 0.5 * 0.50949, b1 = 0.9 * 2.98 + 0.5 * 2.97702;
    CHECK(m.w[0].item<double>() == Approx(0.949 - 0.1 * b0).epsilon(1e-14));
    CHECK(m.w[1].item<double>() == Approx(-2.298 - 0.1 * b1).epsilon(1e-14));
  }
  SECTION("SGD with Nesterov momentum") {
    OneParam m;
    OptimizerConfig c;
    c.kind = "sgd";
    c.lr_other = 0.1;
    c.settings = {{"momentum", 0.5}, {"nesterov", true}};
    auto opt = make_optimizer(m, c);
    step(m, *opt);
    // buf = g; update g + 0.5 buf = 1.5 g.
    CHECK(m.w[0].item<double>() == Approx(1 - 0.1 * 1.5 * 0.5).epsilon(1e-14));
    step(m, *opt);
    // buf = 0.5 g + g = 1.5 g; update g + 0.5 * 1.5 g = 1.75 g.
    CHECK(m.w[1].item<double>() == Approx(-2 - 0.1 * 1.5 * 3 - 0.1 * 1.75 * 3).epsilon(1e-14));
  }
  SECTION("Adagrad with learning-rate decay and an initial accumulator") {
    OneParam m;
    OptimizerConfig c;
    c.kind = "adagrad";
    c.lr_other = 0.5;
    c.settings = {{"lr_decay", 0.1}, {"initial_accumulator", 0.25}, {"eps", 1e-10}};
    auto opt = make_optimizer(m, c);
    step(m, *opt);
    // sum = 0.25 + g²; w -= 0.5 g / sqrt(sum).
    double s0 = 0.25 + 0.25, s1 = 0.25 + 9;
    const double w0 = 1 - 0.5 * 0.5 / (std::sqrt(s0) + 1e-10);
    const double w1 = -2 - 0.5 * 3 / (std::sqrt(s1) + 1e-10);
    CHECK(m.w[0].item<double>() == Approx(w0).epsilon(1e-14));
    CHECK(m.w[1].item<double>() == Approx(w1).epsilon(1e-14));
    step(m, *opt);
    // Second step: clr = 0.5 / (1 + 1 * 0.1).
    s0 += 0.25;
    s1 += 9;
    CHECK(m.w[0].item<double>() == Approx(w0 - 0.5 / 1.1 * 0.5 / (std::sqrt(s0) + 1e-10)).epsilon(1e-14));
    CHECK(m.w[1].item<double>() == Approx(w1 - 0.5 / 1.1 * 3 / (std::sqrt(s1) + 1e-10)).epsilon(1e-14));
  }
  SECTION("the schedule sets each group's rate through the generic options") {
    OneParam m;
    OptimizerConfig c;
    c.kind = "adagrad";
    c.lr_cores = 1;
    c.lr_ranks = 2;
    c.lr_other = 4;
    auto opt = make_optimizer(m, c);
    set_learning_rates(*opt, c, 0.25);
    REQUIRE(opt->param_groups().size() == 3);
    CHECK(opt->param_groups()[0].options().get_lr() == 0.25);
    CHECK(opt->param_groups()[1].options().get_lr() == 0.5);
    CHECK(opt->param_groups()[2].options().get_lr() == 1.0);
  }
}

TEST_CASE("AdamW with relative core rates steps each core at its rate times its initial scale",
          "[training_core]") {
  // A TT layer 64 -> 64 (modes 4x4x4 each side) and a TTM table: Adam's first step moves every
  // entry with a gradient by lr·g/|g|, so each core's step is its own rate, checked against the
  // initialisations' standard deviations computed here: s/sqrt(r_k) with s = (1/128)^(1/12) for
  // the layer, 1/sqrt(r_k) for the table (r_k the core's right rank).
  struct Model : torch::nn::Module {
    Model() {
      tt = register_module("tt", TTLinear(TTLinearOptions({4, 4, 4}, {4, 4, 4}, {1, 4, 16, 64, 16, 4, 1})));
      emb = register_module("emb", TTMEmbedding(TTMEmbeddingOptions(60, {3, 4, 5}, {2, 4, 2}, {1, 5, 6, 1})));
    }
    TTLinear tt{nullptr};
    TTMEmbedding emb{nullptr};
  };
  at::manual_seed(3);
  Model m;
  const double s = std::pow(1.0 / 128, 1.0 / 12);
  const std::vector<double> expected = {s / 2, s / 4, s / 8, s / 4, s / 2, s, 1 / std::sqrt(5.0),
                                        1 / std::sqrt(6.0), 1.0};
  OptimizerConfig c;
  c.lr_cores = 0.01;
  c.lr_ranks = 0;
  c.lr_other = 0;
  const auto groups = group_parameters(m);
  REQUIRE(groups.core_scales.size() == expected.size());
  for (size_t k = 0; k < expected.size(); ++k) CHECK(groups.core_scales[k] == Approx(expected[k]).epsilon(1e-12));
  // Cores 0-5 are the layer's, 6-8 the table's (lr_embedding_cores 0.03 where given).
  for (const std::string mode : {"uniform", "relative", "uniform+embedding", "relative+embedding"}) {
    INFO(mode);
    const bool relative = mode.rfind("relative", 0) == 0, embedding = mode.find('+') != std::string::npos;
    c.settings = {{"core_rates", relative ? "relative" : "uniform"}};
    if (embedding) c.settings["lr_embedding_cores"] = 0.03;
    std::vector<at::Tensor> before;
    for (const auto& p : groups.cores) before.push_back(p.detach().clone());
    auto opt = make_optimizer(m, c);
    opt->zero_grad();
    const auto ids = at::arange(60, at::kLong);
    (m.tt->forward(at::randn({8, 64})).pow(2).sum() + m.emb->forward(ids).pow(3).sum()).backward();
    opt->step();
    for (size_t k = 0; k < groups.cores.size(); ++k) {
      const auto step = (groups.cores[k].detach() - before[k]).abs();
      const auto moved = groups.cores[k].grad().abs().gt(1e-4);
      REQUIRE(moved.any().item<bool>());
      const double rate = (embedding && k >= 6 ? 0.03 : 0.01) * (relative ? expected[k] : 1.0);
      CHECK(step.masked_select(moved).min().item<double>() == Approx(rate).epsilon(1e-2));
      CHECK(step.masked_select(moved).max().item<double>() == Approx(rate).epsilon(1e-2));
    }
  }
  SECTION("recorded only when relative, and AdamW's alone") {
    c.settings = nlohmann::json::object();
    CHECK_FALSE(c.complete_settings().contains("core_rates"));
    c.settings = {{"core_rates", "relative"}};
    CHECK(c.complete_settings().at("core_rates") == "relative");
    c.settings = {{"lr_embedding_cores", 0.02}};
    CHECK(c.complete_settings().at("lr_embedding_cores") == 0.02);
    c.lr_cores = 0;
    CHECK_THROWS_WITH(make_optimizer(m, c), Catch::Contains("lr_embedding_cores") && Catch::Contains("lr_cores"));
    c.settings = {{"core_rates", "scaled"}};
    CHECK_THROWS_WITH(c.complete_settings(), Catch::Contains("core_rates") && Catch::Contains("relative"));
    c.kind = "sgd";
    c.settings = {{"core_rates", "relative"}};
    CHECK_THROWS_WITH(c.complete_settings(), Catch::Contains("core_rates"));
  }
}

TEST_CASE("every optimiser's sliced state gives the step a masking-only run takes",
          "[training_core]") {
  // GaLore projects no TT core: its cores and rank vectors take its plain AdamW step.
  for (const std::string kind : {"adamw", "sgd", "adagrad", "galore"}) {
    INFO(kind);
    auto e = toy_experiment(kind);
    if (kind == "sgd") e.training.optimizer.settings["momentum"] = 0.9;
    e.training.optimizer.weight_decay = 0.01;
    if (kind == "adamw") e.training.optimizer.settings["amsgrad"] = true;
    const ToyDataset data(14, 5);
    const auto batch = data.batch({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13});
    // Two identical models and optimisers; three steps, so every state is non-trivial.
    at::manual_seed(1);
    auto cut = e.model.build(e.training.task, {});
    at::manual_seed(1);
    auto masked = e.model.build(e.training.task, {});
    auto opt_cut = make_optimizer(cut->model(), e.training.optimizer);
    auto opt_masked = make_optimizer(masked->model(), e.training.optimizer);
    const Objective objective(SurrogateKind::Weighted, {0.1, 0.01}, {}, 100, 100);
    for (int i = 0; i < 3; ++i) {
      training_step(*cut, *opt_cut, objective, 0, batch);
      training_step(*masked, *opt_masked, objective, 0, batch);
    }
    // Prune entry 1 of the middle bond and entry 0 of the first, in both.
    auto* layer_cut = tensorized_layers(cut->model()).at(0).layer;
    auto* layer_masked = tensorized_layers(masked->model()).at(0).layer;
    {
      at::NoGradGuard no_grad;
      for (auto* l : {layer_cut, layer_masked}) {
        l->rank_vectors()[1][1] = 1e-3;
        l->rank_vectors()[0][0] = -1e-3;
      }
    }
    const auto kept = std::vector<at::Tensor>{at::tensor({1}, at::kLong), at::tensor({0, 2, 3}, at::kLong),
                                              at::tensor({0, 1}, at::kLong)};
    REQUIRE(!truncate_model(cut->model(), opt_cut.get(), false).empty());
    training_step(*cut, *opt_cut, objective, 0, batch);
    training_step(*masked, *opt_masked, objective, 0, batch);
    // The kept slices of the masking-only run equal the cut run's parameters.
    const auto cores_cut = layer_cut->cores(), cores_masked = layer_masked->cores();
    for (size_t k = 0; k < cores_cut.size(); ++k) {
      auto expected = cores_masked[k];
      if (k > 0) expected = expected.index_select(0, kept[k - 1]);
      if (k + 1 < cores_cut.size()) expected = expected.index_select(2, kept[k]);
      INFO("core " << k);
      CHECK(at::allclose(cores_cut[k], expected, 1e-12, 1e-14));
    }
    const auto d_cut = layer_cut->rank_vectors(), d_masked = layer_masked->rank_vectors();
    for (size_t k = 0; k < d_cut.size(); ++k) {
      INFO("rank vector " << k);
      CHECK(at::allclose(d_cut[k], d_masked[k].index_select(0, kept[k]), 1e-12, 1e-14));
    }
  }
}

TEST_CASE("config errors for model kinds, tasks, optimisers and devices", "[training_core]") {
  (void)kToyRegistered;
  auto experiment = [](nlohmann::json model, nlohmann::json training) {
    return parse_experiment(nlohmann::json{{"model", model}, {"training", training}}, "x.json");
  };
  CHECK_THROWS_WITH(experiment({{"kind", "nope"}}, nlohmann::json::object()),
                    Contains("model.kind: unknown model kind 'nope' (known: ") && Contains("toy") &&
                        Contains("transformer"));
  CHECK_THROWS_WITH(experiment({{"kind", "toy"}}, {{"task", "classification"}}),
                    Contains("training.task: a toy model is not trained for 'classification' (it can be: lean)"));
  CHECK_THROWS_WITH(experiment({{"kind", "toy"}}, {{"task", "lean"}, {"optimizer", {{"kind", "adam"}}}}),
                    Contains("training.optimizer.kind") && Contains("adagrad, adamw, galore, sgd"));
  CHECK_THROWS_WITH(experiment({{"kind", "toy"}},
                               {{"task", "lean"}, {"optimizer", {{"kind", "sgd"}, {"betas", {0.9, 0.99}}}}}),
                    Contains("training.optimizer.betas"));
  CHECK_THROWS_WITH(experiment({{"kind", "toy"}}, {{"task", "lean"}, {"device", "gpu0"}}),
                    Contains("training.device: 'gpu0' is not a device (write cpu, cuda or cuda:N)"));
  // A misspelt optional section is named with the sections this level has, though none of
  // those was given: "dta" lists "data".
  CHECK_THROWS_WITH(parse_experiment(nlohmann::json{{"model", {{"kind", "toy"}}},
                                                    {"training", {{"task", "lean"}}},
                                                    {"dta", nlohmann::json::object()}}),
                    Contains("dta: unknown key") && Contains("known keys here: data, ") &&
                        Contains("method_settings"));
  // Given by a user, two ways to say one thing are refused; the recorded form (known by its
  // "omega" pair, the unused start 0) reads back as what it records.
  const nlohmann::json late = {{"start_epoch", 1}, {"size_target", 500}, {"size_ratio", 0.3}};
  CHECK_THROWS_WITH(experiment({{"kind", "toy"}}, {{"task", "lean"}, {"epochs", 2}, {"late_stage", late}}),
                    Contains("size_target (absolute) or size_ratio, not both"));
  auto recorded = late;
  recorded["omega"] = {0.5, 2};
  const auto r = experiment({{"kind", "toy"}}, {{"task", "lean"}, {"epochs", 2}, {"late_stage", recorded}});
  CHECK(r.training.late.size_target == 500);
  CHECK(r.training.late.omega_loss == 0.5);
  CHECK(r.training.late.omega_size == 2);
  recorded["omega_loss"] = 1;
  CHECK_THROWS_WITH(experiment({{"kind", "toy"}}, {{"task", "lean"}, {"epochs", 2}, {"late_stage", recorded}}),
                    Contains("training.late_stage.omega: give omega_loss and omega_size, or the recorded pair"));
  const nlohmann::json phases = {{{"max_length", 8}}, {{"start_epoch", 1}, {"start_step", 5}, {"max_length", 16}}};
  CHECK_THROWS_WITH(experiment({{"kind", "toy"}}, {{"task", "lean"}, {"epochs", 2}, {"length_phases", phases}}),
                    Contains("length_phases[1]: give start_epoch or start_step, not both"));

  const auto e = experiment({{"kind", "toy"}}, {{"task", "lean"}, {"device", "cuda:0"}});
  if (!at::hasCUDA())
    CHECK_THROWS_WITH(Trainer(e.model, e.training, toy_data()), Contains("has no CUDA device"));
}

TEST_CASE("an optimiser that cannot slice its state refuses truncation before training",
          "[training_core]") {
  struct Plain : torch::optim::Optimizer {
    using torch::optim::Optimizer::Optimizer;
    at::Tensor step(LossClosure) override { return {}; }
    void save(torch::serialize::OutputArchive&) const override {}
    void load(torch::serialize::InputArchive&) override {}
  };
  const auto e = toy_experiment();
  auto task = e.model.build(e.training.task, {});
  Plain plain({torch::optim::OptimizerParamGroup(task->model().parameters())},
              std::make_unique<torch::optim::SGDOptions>(0.1));
  CHECK_FALSE(can_slice(plain));
  std::vector<ParamSlice> slices{{task->model().parameters()[0], {{0, at::tensor({0}, at::kLong)}}}};
  CHECK_THROWS_WITH(slice_optimizer_state(plain, slices), Contains("set training.truncation.when"));
}

TEST_CASE("a range error writes its bounds as numbers are written, not rounded to 0", "[training_core]") {
  const ConfigReader reader(nlohmann::json{{"alpha", 0.0}}, "model.lte");
  CHECK_THROWS_WITH(reader.number("alpha", 1.0, 1e-12),
                    Contains("model.lte.alpha") && Contains("use a value in [1e-12, ...]"));
}
