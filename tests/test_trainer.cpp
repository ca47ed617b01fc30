// The trainer: resume equals an uninterrupted run, truncation mid-training keeps the loss and
// slices the optimiser state, late-stage switching, NaN stop, evaluation, schedules, groups.
#include "search/bench/step_benchmark.h"
#include "core/data/pair_dataset.h"
#include "core/kernels/fast_kernels.h"
#include "core/layers/size.h"
#include "core/models/model_kind.h"
#include "core/models/transformer.h"
#include "core/training/checkpoint.h"
#include "core/training/fused_adamw.h"
#include "core/training/lr_schedule.h"
#include "core/training/optimizer.h"
#include "core/training/param_groups.h"
#include "core/training/rank_truncation.h"
#include "core/training/trainer.h"
#include "core/training/training_step.h"
#include "core/util/allocator.h"
#include "core/util/error.h"
#include "tests/support/catch.h"
#include "tests/support/same_parameters.h"
#include "tests/support/tiny_trainer.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/optim/adamw.h>

#include <algorithm>
#include <fstream>
#include <cmath>
#include <filesystem>
#include <limits>
#include <random>
#include <set>
#include <thread>

using namespace comera;
using comera::testing::check_same_parameters;
using namespace comera::testing;
using Catch::Matchers::Contains;

namespace {

std::string temp_path(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / "comera_test_trainer";
  std::filesystem::create_directories(dir);
  const auto p = (dir / name).string();
  std::filesystem::remove(p);
  return p;
}

TrainerOptions quiet(const std::string& checkpoint = "") {
  TrainerOptions o;
  o.checkpoint = checkpoint;
  return o;
}


}  // namespace

TEST_CASE("a resumed run ends exactly where the uninterrupted run does", "[trainer]") {
  const auto train = synthetic_pairs(24, 1), eval = synthetic_pairs(9, 2);
  const auto model = tiny_model(0.9);

  Trainer full(model, tiny_training(), pairs_data(train, eval), quiet(temp_path("full.pt")));
  const auto a = full.run();
  REQUIRE(a.status == RunStatus::Completed);
  CHECK(a.steps == 15);
  // Truncation really shrank something, so the resume had to rebuild shapes.
  bool shrunk = false;
  for (const auto& [name, r] : allocated_ranks(full.model())) {
    (void)name;
    for (size_t k = 1; k + 1 < r.size(); ++k) shrunk |= r[k] < 3;
  }
  CHECK(shrunk);

  SECTION("stopped by a step limit inside an epoch, then resumed") {
    const auto path = temp_path("limit.pt");
    auto options = quiet(path);
    options.stop_at_step = 7;
    {  // a trainer holds its checkpoint's lock until it is gone
      Trainer first(model, tiny_training(), pairs_data(train, eval), options);
      const auto b = first.run();
      CHECK(b.status == RunStatus::StepLimit);
      CHECK(b.steps == 7);
      REQUIRE(b.epochs.size() == 2);
      CHECK(b.epochs.back().partial);
    }
    // The checkpoint keeps the training time so far, and the resumed run adds to it.
    const double kept = Checkpoint(path).state().elapsed_s;
    CHECK(kept > 0);
    Trainer second(model, tiny_training(), pairs_data(train, eval), [&] {
      auto o = quiet(path);
      o.resume = true;
      return o;
    }());
    CHECK(second.resumed());
    CHECK(second.state().step == 7);
    const auto c = second.run();
    CHECK(c.status == RunStatus::Completed);
    CHECK(c.steps == 15);
    check_same_parameters(full.model(), second.model());
    CHECK(c.epochs.back().eval_loss == a.epochs.back().eval_loss);
    CHECK(c.epochs.front().elapsed_s > kept);
  }

  SECTION("checks inside epochs leave the run unchanged; stopped at one, then resumed") {
    // Five steps an epoch: checks every 2 fall at steps 2 and 4 of each, never at its end.
    std::vector<EpochMetrics> seen;
    auto options = quiet(temp_path("checked.pt"));
    options.checks.every_steps = 2;
    options.stop_at_check = [&](const EpochMetrics& m) {
      seen.push_back(m);
      return false;
    };
    {
      Trainer checked(model, tiny_training(), pairs_data(train, eval), options);
      CHECK(checked.run().status == RunStatus::Completed);
      check_same_parameters(full.model(), checked.model());
    }
    std::vector<int64_t> steps;
    for (const auto& m : seen) {
      steps.push_back(m.step);
      CHECK(m.partial);
      CHECK(m.epoch_fraction == Approx(static_cast<double>((m.step - 5 * m.epoch)) / 5));
    }
    CHECK(steps == std::vector<int64_t>{2, 4, 7, 9, 12, 14});
    // From epoch 1 on only: none in the first epoch.
    {
      std::vector<int64_t> later;
      auto o = options;
      o.checkpoint = temp_path("checked_later.pt");
      o.checks.from_epoch = 1;
      o.stop_at_check = [&](const EpochMetrics& m) {
        later.push_back(m.step);
        return false;
      };
      Trainer checked(model, tiny_training(), pairs_data(train, eval), o);
      checked.run();
      CHECK(later == std::vector<int64_t>{7, 9, 12, 14});
    }
    // The check at step 7 evaluates the model a step limit at 7 leaves.
    double limit_eval = 0;
    {
      auto o = quiet(temp_path("limit7.pt"));
      o.stop_at_step = 7;
      Trainer limited(model, tiny_training(), pairs_data(train, eval), o);
      limit_eval = limited.run().epochs.back().eval_loss;
    }
    CHECK(seen[2].eval_loss == limit_eval);

    const auto path = temp_path("stopped_at_check.pt");
    auto stopping = quiet(path);
    stopping.checks.every_steps = 2;
    stopping.stop_at_check = [](const EpochMetrics& m) { return m.step == 7; };
    {
      Trainer first(model, tiny_training(), pairs_data(train, eval), stopping);
      const auto b = first.run();
      CHECK(b.status == RunStatus::StepLimit);
      CHECK(b.steps == 7);
      REQUIRE(b.epochs.size() == 2);
      CHECK(b.epochs.back().partial);
      CHECK(b.epochs.back().epoch_fraction == Approx(0.4));
      CHECK(b.epochs.back().eval_loss == limit_eval);
    }
    auto resume = quiet(path);
    resume.resume = true;
    Trainer second(model, tiny_training(), pairs_data(train, eval), resume);
    CHECK(second.state().step == 7);
    CHECK(second.run().status == RunStatus::Completed);
    check_same_parameters(full.model(), second.model());
  }

  SECTION("killed after a mid-epoch checkpoint, then resumed") {
    const auto path = temp_path("killed.pt");
    auto options = quiet(path);
    options.on_epoch = [](const EpochMetrics& m) {
      if (m.epoch == 1) throw std::runtime_error("killed");
    };
    auto training = tiny_training();
    training.checkpoint_every_steps = 4;
    {
      Trainer first(model, training, pairs_data(train, eval), options);
      CHECK_THROWS_WITH(first.run(), Contains("killed"));
    }
    // An epoch is recorded before its checkpoint is written, so the kill in the epoch-1 report
    // leaves the step-8 checkpoint: resuming reruns the rest of epoch 1 and records it then.
    CHECK(Checkpoint(path).state().step == 8);
    auto resume = quiet(path);
    resume.resume = true;
    Trainer second(model, training, pairs_data(train, eval), resume);
    CHECK(second.run().status == RunStatus::Completed);
    check_same_parameters(full.model(), second.model());
  }
}

TEST_CASE("truncation mid-training leaves the loss unchanged and slices the AdamW moments",
          "[trainer]") {
  at::manual_seed(4);
  const auto task = tiny_model().build({}, {});
  auto& model = task->model();
  model.to(at::kDouble);
  OptimizerConfig oc;
  oc.settings["amsgrad"] = true;
  auto optimizer = make_optimizer(model, oc);
  Objective objective(SurrogateKind::Weighted, {0.1, 0}, {}, 1000, 1000);
  const auto data = synthetic_pairs(8, 3);
  const auto batch = data.batch({0, 1, 2, 3, 4, 5, 6, 7});
  for (int i = 0; i < 2; ++i) training_step(*task, *optimizer, objective, 0, batch);

  // Prune some entries by hand, after the optimiser has moments for them.
  auto layers = tensorized_layers(model);
  {
    at::NoGradGuard no_grad;
    for (auto& l : layers) {
      auto d = l.layer->rank_vectors();
      d[0][1] = 0.001;
      d.back()[0] = -0.002;
    }
  }
  auto loss_of = [&] {
    at::NoGradGuard no_grad;
    model.eval();
    const auto loss = task->forward(batch).loss.item<double>();
    model.train();
    return loss;
  };
  const double before = loss_of();
  // Expected kept indices, from the rank vectors themselves; old moments by parameter.
  struct Old {
    at::Tensor param, exp_avg, exp_avg_sq, max_exp_avg_sq;
  };
  std::vector<std::vector<at::Tensor>> keep;
  std::vector<std::vector<Old>> old_cores, old_ranks;
  auto old_state = [&](const at::Tensor& p) {
    auto& s = static_cast<torch::optim::AdamWParamState&>(
        *optimizer->state().at(state_key(p)));
    return Old{p, s.exp_avg().clone(), s.exp_avg_sq().clone(), s.max_exp_avg_sq().clone()};
  };
  for (auto& l : layers) {
    std::vector<at::Tensor> k;
    for (const auto& d : l.layer->rank_vectors())
      k.push_back(at::nonzero(d.abs() >= l.layer->threshold()).view({-1}));
    keep.push_back(k);
    std::vector<Old> cs, rs;
    for (const auto& c : l.layer->cores()) cs.push_back(old_state(c));
    for (const auto& d : l.layer->rank_vectors()) rs.push_back(old_state(d));
    old_cores.push_back(cs);
    old_ranks.push_back(rs);
  }

  const auto changed = truncate_model(model, optimizer.get(), false);
  CHECK(changed.size() == layers.size());
  CHECK(loss_of() == Approx(before).epsilon(1e-12));

  auto sliced = [](at::Tensor t, int64_t dim, const at::Tensor& index) {
    return index.defined() ? t.index_select(dim, index) : t;
  };
  for (size_t i = 0; i < layers.size(); ++i) {
    INFO(layers[i].name);
    const auto& k = keep[i];
    const int64_t K = static_cast<int64_t>(old_cores[i].size());
    for (int64_t c = 0; c < K; ++c) {
      const int core_dim_right = layers[i].layer->layer_kind() == "ttm_embedding" ? 3 : 2;
      auto cut = [&](const at::Tensor& t) {
        auto x = sliced(t, 0, c > 0 ? k[c - 1] : at::Tensor());
        return sliced(x, core_dim_right, c + 1 < K ? k[c] : at::Tensor());
      };
      const auto& o = old_cores[i][c];
      auto& s = static_cast<torch::optim::AdamWParamState&>(
          *optimizer->state().at(state_key(o.param)));
      CHECK(at::equal(s.exp_avg(), cut(o.exp_avg)));
      CHECK(at::equal(s.exp_avg_sq(), cut(o.exp_avg_sq)));
      CHECK(at::equal(s.max_exp_avg_sq(), cut(o.max_exp_avg_sq)));
      CHECK(o.param.sizes() == s.exp_avg().sizes());
    }
    for (size_t r = 0; r < old_ranks[i].size(); ++r) {
      const auto& o = old_ranks[i][r];
      auto& s = static_cast<torch::optim::AdamWParamState&>(
          *optimizer->state().at(state_key(o.param)));
      CHECK(at::equal(s.exp_avg(), o.exp_avg.index_select(0, k[r])));
      CHECK(at::equal(s.exp_avg_sq(), o.exp_avg_sq.index_select(0, k[r])));
    }
  }
  // Training goes on with the smaller shapes.
  const auto r = training_step(*task, *optimizer, objective, 1.0, batch);
  CHECK(r.finite);
}

TEST_CASE("the late stage starts at the configured epoch or step", "[trainer]") {
  const auto train = synthetic_pairs(24, 1), eval = synthetic_pairs(6, 2);
  SECTION("by epoch: S0 is the ratio of the exact size at the end of the early stage") {
    Trainer t(tiny_model(0.9), tiny_training(), pairs_data(train, eval), quiet());
    const auto r = t.run();
    REQUIRE(r.epochs.size() == 3);
    CHECK(r.epochs[0].stage == "early");
    CHECK(r.epochs[1].stage == "late");
    CHECK(r.epochs[2].stage == "late");
    CHECK(t.objective().late());
    CHECK(t.objective().size_target() ==
          Approx(0.5 * static_cast<double>(r.epochs[0].size.tensorized) / t.state().initial_size));
    // Each late epoch reports the targets it worked toward, S0 in exact core entries.
    CHECK(r.epochs[0].size_target == 0);
    for (size_t e : {1, 2}) {
      CHECK(r.epochs[e].loss_target == tiny_training().late.loss_target);
      CHECK(r.epochs[e].size_target == Approx(0.5 * static_cast<double>(r.epochs[0].size.tensorized)));
    }
  }
  SECTION("the rank vectors take the late stage's learning rate from its first step") {
    auto c = tiny_training();
    c.schedule.kind = ScheduleKind::Constant;
    c.late.start_step = 7;
    c.late.lr_ranks = 0.125;
    auto rank_lr = [](Trainer& t) {
      return t.optimizer().param_groups()[1].options().get_lr();
    };
    auto options = quiet();
    options.stop_at_step = 6;
    Trainer early(tiny_model(), c, pairs_data(train, eval), options);
    early.run();
    CHECK(rank_lr(early) == c.optimizer.lr_ranks);
    options.stop_at_step = 8;
    Trainer late(tiny_model(), c, pairs_data(train, eval), options);
    late.run();
    CHECK(rank_lr(late) == 0.125);
    CHECK(late.optimizer().param_groups()[0].options().get_lr() == c.optimizer.lr_cores);
  }
  SECTION("by step, inside an epoch") {
    auto c = tiny_training();
    c.late.start_step = 7;
    auto options = quiet();
    options.stop_at_step = 6;
    Trainer t(tiny_model(), c, pairs_data(train, eval), options);
    t.run();
    CHECK_FALSE(t.objective().late());
    Trainer u(tiny_model(), c, pairs_data(train, eval), [] {
      auto o = quiet();
      o.stop_at_step = 8;
      return o;
    }());
    const auto r = u.run();
    CHECK(u.objective().late());
    CHECK(r.epochs.back().stage == "late");
    CHECK(r.epochs.front().stage == "early");
  }
}

TEST_CASE("a layer pruned to rank 0 is named in a notice, once, with what keeps it", "[trainer]") {
  // Threshold 1: every rank entry that the size penalty, or without one the task loss, moves
  // below its initial 1 is cut.
  const double gamma = GENERATE(1.0, 0.0);  // 0: no size term, and no late stage either
  INFO("gamma " << gamma);
  const auto train = synthetic_pairs(24, 1), eval = synthetic_pairs(6, 2);
  std::vector<std::string> notices;
  auto options = quiet();
  options.on_notice = [&](const std::string& text) { notices.push_back(text); };
  auto c = tiny_training();
  c.early.gamma = gamma;
  c.late.enabled = gamma > 0;
  Trainer t(tiny_model(1.0), c, pairs_data(train, eval), options);
  const auto r = t.run();
  std::set<std::string> lost;
  for (const auto& layer : r.epochs.back().size.layers)
    if (std::find(layer.ranks.begin(), layer.ranks.end(), 0) != layer.ranks.end()) lost.insert(layer.name);
  REQUIRE_FALSE(lost.empty());
  std::set<std::string> named;
  for (const auto& text : notices)
    if (text.find("lost every rank") != std::string::npos)
      named.insert(text.substr(6, text.find(' ', 6) - 6));  // "layer NAME lost ..."
  CHECK(named == lost);
  CHECK(std::count_if(notices.begin(), notices.end(), [](const std::string& text) {
          return text.find("lost every rank") != std::string::npos;
        }) == static_cast<long>(lost.size()));
  for (const auto& text : notices)
    if (text.find("lost every rank") != std::string::npos)
      CHECK_THAT(text, Contains(gamma > 0 ? "a smaller gamma" : "no size term acts"));
}

TEST_CASE("a NaN or inf loss stops the run and keeps the last good checkpoint", "[trainer]") {
  const auto train = synthetic_pairs(10, 1), eval = synthetic_pairs(4, 2);
  const double nan = std::numeric_limits<double>::quiet_NaN(),
               inf = std::numeric_limits<double>::infinity();
  // A NaN bias makes every logit NaN; a -inf bias on classes 0 and 1 gives those examples an
  // infinite cross-entropy while the forward stays NaN-free.
  for (const auto& [poison, word] : {std::pair<std::vector<double>, std::string>{{nan, nan, nan}, "nan"},
                                     {{-inf, -inf, 0.0}, "inf"}}) {
    INFO(word);
    const auto path = temp_path("diverged_" + word + ".pt");
    auto options = quiet(path);
    torch::nn::Module* model = nullptr;
    int reports = 0;
    // Poisoned in the second epoch's report, which comes before that epoch's checkpoint.
    options.on_epoch = [&](const EpochMetrics&) {
      if (++reports < 2) return;
      at::NoGradGuard no_grad;
      model->named_parameters()["classification.classifier.bias"].copy_(at::tensor(poison));
    };
    auto c = tiny_training();
    c.late.enabled = false;
    Trainer t(tiny_model(), c, pairs_data(train, eval), options);
    model = &t.model();
    const auto r = t.run();
    CHECK(r.status == RunStatus::Diverged);
    CHECK_THAT(r.message, Contains(word) && Contains("step 2, the last with finite parameters) is kept"));
    CHECK(r.steps == 4);
    const Checkpoint kept(path);
    CHECK(kept.state().step == 2);
    Transformer fresh(tiny_config());
    kept.load_model(*fresh);
    for (const auto& p : fresh->parameters()) CHECK(at::isfinite(p).all().item<bool>());
  }
}

TEST_CASE("a loss that is NaN from the first step names epoch 0, as the database numbers epochs", "[trainer]") {
  const auto train = synthetic_pairs(10, 1), eval = synthetic_pairs(4, 2);
  auto c = tiny_training();
  c.late.enabled = false;
  Trainer t(tiny_model(), c, pairs_data(train, eval), quiet(temp_path("diverged_first_step.pt")));
  {
    at::NoGradGuard no_grad;
    t.model().named_parameters()["classification.classifier.bias"].fill_(std::numeric_limits<double>::quiet_NaN());
  }
  const auto r = t.run();
  CHECK(r.status == RunStatus::Diverged);
  CHECK_THAT(r.message, Contains("at epoch 0, step 1"));
}

TEST_CASE("evaluation covers every example, loss averaged per example", "[trainer]") {
  at::manual_seed(2);
  const auto task = tiny_model().build({}, {});
  auto& model = dynamic_cast<TransformerImpl&>(task->model());
  const auto data = synthetic_pairs(7, 5);
  const auto r = evaluate(*task, data, 3, at::kCPU);
  CHECK(model.is_training());
  CHECK(r.predictions == 7);
  model.eval();
  at::NoGradGuard no_grad;
  double loss = 0;
  int64_t correct = 0;
  for (int64_t i = 0; i < 7; ++i) {
    const auto b = data.batch({i});
    const auto logits = model.classify(b.at("input_ids"), b.at("segment_ids"), b.at("attention_mask"));
    loss += at::cross_entropy_loss(logits, b.at("labels")).item<double>();
    correct += logits.argmax(-1).item<int64_t>() == b.at("labels").item<int64_t>();
  }
  CHECK(r.loss == Approx(loss / 7).epsilon(1e-5));
  CHECK(r.accuracy == Approx(static_cast<double>(correct) / 7));
}

TEST_CASE("learning-rate schedules by hand", "[trainer]") {
  ScheduleConfig s;
  CHECK(lr_factor(s, 50, 100) == 1.0);
  s.warmup_steps = 10;
  CHECK(lr_factor(s, 0, 100) == Approx(0.1));
  CHECK(lr_factor(s, 9, 100) == Approx(1.0));
  s.kind = ScheduleKind::Linear;
  CHECK(lr_factor(s, 10, 110) == Approx(1.0));
  CHECK(lr_factor(s, 60, 110) == Approx(0.5));
  CHECK(lr_factor(s, 110, 110) == Approx(0.0));
  s.kind = ScheduleKind::Cosine;
  s.min_factor = 0.2;
  CHECK(lr_factor(s, 60, 110) == Approx(0.2 + 0.8 * 0.5));
  CHECK(lr_factor(s, 35, 110) == Approx(0.2 + 0.8 * 0.5 * (1 + std::cos(M_PI / 4))));
}

TEST_CASE("AdamW has three groups with their own learning rates", "[trainer]") {
  Transformer model(tiny_config());
  OptimizerConfig oc;
  auto optimizer = make_optimizer(*model, oc);
  auto& groups = optimizer->param_groups();
  REQUIRE(groups.size() == 3);
  // 1 TTM (3 cores, 2 rank vectors) + 4 attention + 2 FFN TT layers (4 cores, 3 rank vectors).
  CHECK(groups[0].params().size() == 3 + 6 * 4);
  CHECK(groups[1].params().size() == 2 + 6 * 3);
  CHECK(groups[2].params().size() == model->parameters().size() - groups[0].params().size() -
                                         groups[1].params().size());
  set_learning_rates(*optimizer, oc, 0.5);
  CHECK(groups[0].options().get_lr() == Approx(0.5e-4));
  CHECK(groups[1].options().get_lr() == Approx(0.5e-3));
  CHECK(groups[2].options().get_lr() == Approx(0.25e-4));
}

TEST_CASE("a run toward other late-stage targets goes on from an early stage another run kept", "[trainer]") {
  const auto train = synthetic_pairs(24, 1), eval = synthetic_pairs(9, 2);
  const auto model = tiny_model(0.9);
  auto other = tiny_training();
  other.late.loss_target = 0.3;
  other.late.size_ratio = 0.2;
  other.late.rho = 0.05;
  // The reference: a whole run toward `other`'s targets.
  Trainer whole(model, other, pairs_data(train, eval), quiet(temp_path("whole_other.pt")));
  const auto a = whole.run();
  REQUIRE(a.status == RunStatus::Completed);

  const auto early = temp_path("early_stage.pt");
  double first_loss = 0, first_early_s = 0;
  {
    auto o = quiet(temp_path("first_targets.pt"));
    o.early_stage_copy = early;
    Trainer first(model, tiny_training(), pairs_data(train, eval), o);
    const auto r = first.run();
    first_loss = r.epochs.back().eval_loss;
    first_early_s = r.epochs.front().elapsed_s;
  }
  REQUIRE(std::filesystem::exists(early));
  CHECK(first_loss != a.epochs.back().eval_loss);  // the targets matter, so the check below can fail
  {
    const Checkpoint kept(early);
    CHECK(kept.state().epoch == 1);
    CHECK(kept.state().step == 5);
    CHECK_FALSE(kept.state().late);
    // The seconds the epoch recorded, not those at its checkpoint (after its evaluation): a run
    // going on from it then adds only its own seconds.
    CHECK(kept.state().elapsed_s == first_early_s);
  }
  const auto path = temp_path("from_early.pt");
  copy_checkpoint(early, path);
  auto o = quiet(path);
  o.resume = true;
  Trainer second(model, other, pairs_data(train, eval), o);
  CHECK(second.resumed());
  const auto b = second.run();
  REQUIRE(b.epochs.size() == 2);
  check_same_parameters(whole.model(), second.model());
  CHECK(b.epochs.back().eval_loss == a.epochs.back().eval_loss);
  CHECK(b.epochs.back().loss_target == 0.3);

  SECTION("a checkpoint taken inside the late stage is not resumed toward other targets") {
    const auto late = temp_path("late_stage.pt");
    {
      auto lo = quiet(late);
      lo.stop_at_step = 7;
      Trainer(model, tiny_training(), pairs_data(train, eval), lo).run();
    }
    auto lo = quiet(late);
    lo.resume = true;
    CHECK_THROWS_WITH(Trainer(model, other, pairs_data(train, eval), lo),
                      Contains("other training settings (late_stage.loss_target"));
  }
  SECTION("a copy that cannot be written is a notice; the run goes on whole") {
    const auto blocker = temp_path("not_a_folder");
    std::ofstream(blocker) << "a file";
    auto so = quiet(temp_path("blocked.pt"));
    so.early_stage_copy = blocker + "/early.pt";
    std::vector<std::string> notices;
    so.on_notice = [&notices](const std::string& text) { notices.push_back(text); };
    const auto r = Trainer(model, tiny_training(), pairs_data(train, eval), so).run();
    CHECK(r.status == RunStatus::Completed);
    CHECK(r.epochs.back().eval_loss == first_loss);
    CHECK(std::any_of(notices.begin(), notices.end(), [](const std::string& n) {
      return n.find("could not be written") != std::string::npos && n.find("train their own") != std::string::npos;
    }));
  }
  SECTION("nor is a copy kept of an early stage that ends inside an epoch") {
    auto c = tiny_training();
    c.late.start_step = 7;
    const auto none = temp_path("early_by_step.pt");
    auto so = quiet(temp_path("by_step.pt"));
    so.early_stage_copy = none;
    Trainer(model, c, pairs_data(train, eval), so).run();
    CHECK_FALSE(std::filesystem::exists(none));
  }
}

TEST_CASE("resuming with another model config is refused", "[trainer]") {
  const auto train = synthetic_pairs(10, 1), eval = synthetic_pairs(4, 2);
  const auto path = temp_path("identity.pt");
  auto c = tiny_training();
  c.epochs = 1;
  c.late.enabled = false;  // one epoch: no late stage to run
  Trainer(tiny_model(), c, pairs_data(train, eval), quiet(path)).run();
  auto options = quiet(path);
  options.resume = true;
  CHECK_THROWS_WITH(Trainer(tiny_model(0.5), c, pairs_data(train, eval), options),
                    Contains("different model config"));
}

TEST_CASE("resuming with other data files or another evaluation set is refused, naming it",
          "[trainer]") {
  const auto train = synthetic_pairs(10, 1), eval = synthetic_pairs(4, 2);
  const auto path = temp_path("data_identity.pt");
  auto c = tiny_training();
  c.epochs = 1;
  c.late.enabled = false;  // one epoch: no late stage to run
  auto data = pairs_data(train, eval);
  data.train_file = "/data/a/train.jsonl";
  data.eval_file = "/data/a/dev.jsonl";
  Trainer(tiny_model(), c, data, quiet(path)).run();
  auto options = quiet(path);
  options.resume = true;
  auto other = data;
  other.train_file = "/data/b/train.jsonl";
  CHECK_THROWS_WITH(Trainer(tiny_model(), c, other, options),
                    Contains("other data") && Contains("data.train \"/data/a/train.jsonl\" -> \"/data/b/train.jsonl\""));
  auto fewer = data;
  fewer.eval = std::make_shared<PairDataset>(synthetic_pairs(3, 2));
  CHECK_THROWS_WITH(Trainer(tiny_model(), c, fewer, options), Contains("data.eval_examples 4 -> 3"));
  CHECK(Trainer(tiny_model(), c, data, options).resumed());
}

TEST_CASE("FusedAdamW follows torch::optim::AdamW step for step", "[trainer]") {
  // With the fast kernels off, and for a non-contiguous parameter always, FusedAdamW takes the
  // composite step: the stock step's ops, so equal bit for bit.
  const int saved_threads = at::get_num_threads();
  at::set_num_threads(2);
  for (const bool fast : {true, false})
    for (const bool amsgrad : {false, true})
      for (const auto dtype : {at::kDouble, at::kFloat}) {
        INFO("fast kernels " << fast << " amsgrad " << amsgrad << " dtype " << dtype);
        const FastKernelsGuard kernels(fast);
        at::manual_seed(1);
        std::vector<at::Tensor> a, b;
        // 1037 entries: the vectorised float update's full vectors and its tail; 70,001: enough
        // in all for the threads to split the entries (mid-parameter) at two threads.
        for (const auto& shape : {std::vector<int64_t>{3, 4, 5}, {7}, {1}, {1037}, {70001}, {5, 3}}) {
          auto t = at::randn(shape, dtype);
          if (shape.size() == 2) t = t.t();
          a.push_back(t.detach().requires_grad_());
          b.push_back(a.back().detach().clone().requires_grad_());
        }
        REQUIRE_FALSE(a.back().is_contiguous());
        const auto options = torch::optim::AdamWOptions(0.01)
                                 .betas({0.8, 0.95})
                                 .eps(1e-6)
                                 .weight_decay(0.1)
                                 .amsgrad(amsgrad);
        FusedAdamW fused(a, options);
        torch::optim::AdamW reference(b, options);
        for (int step = 0; step < 5; ++step) {
          for (size_t i = 0; i < a.size(); ++i) {
            const auto g = at::randn(a[i].sizes(), dtype) * (step + 1);
            a[i].mutable_grad() = g.clone();
            b[i].mutable_grad() = g.clone();
          }
          fused.step();
          reference.step();
        }
        const double tol = dtype == at::kDouble ? 1e-12 : 1e-5;
        for (size_t i = 0; i < a.size(); ++i) {
          INFO("parameter " << i);
          if (!fast || !a[i].is_contiguous())
            CHECK(at::equal(a[i], b[i]));
          else
            CHECK(at::allclose(a[i], b[i], tol, tol));
        }
      }
  at::set_num_threads(saved_threads);
}

TEST_CASE("training learns a learnable task", "[trainer]") {
  // label = first token of the pair mod 3: learnable through [CLS] attention.
  const auto train = synthetic_pairs(240, 1), eval = synthetic_pairs(60, 2);
  auto model = parse_model_spec(nlohmann::json{
      {"vocab", 50}, {"d_model", 32}, {"heads", 2}, {"layers", 1}, {"ffn", 64},
      {"max_positions", 16}, {"classes", 3}, {"dropout", 0.0},
      {"tensorized",
       {{"embedding", {{"vocab_modes", {4, 4, 4}}, {"emb_modes", {2, 4, 4}}, {"ranks", 8}}},
        {"attention", {{"in_modes", {8, 4}}, {"out_modes", {4, 8}}, {"ranks", 8}}},
        {"ffn_in", {{"in_modes", {8, 4}}, {"out_modes", {8, 8}}, {"ranks", 8}}},
        {"ffn_out", {{"in_modes", {8, 8}}, {"out_modes", {4, 8}}, {"ranks", 8}}}}}});
  TrainConfig c;
  c.epochs = 8;
  c.batch_size = 16;
  c.optimizer.lr_cores = c.optimizer.lr_other = 5e-3;
  c.early.gamma = 0;
  Trainer t(model, c, pairs_data(train, eval), quiet());
  const auto r = t.run();
  INFO("first eval loss " << r.epochs.front().eval_loss << ", last " << r.epochs.back().eval_loss);
  CHECK(r.epochs.back().eval_loss < 0.5 * r.epochs.front().eval_loss);
  CHECK(r.epochs.back().accuracy > 0.8);
}

TEST_CASE("an epoch's peak tensor memory holds the parameters, gradients and AdamW moments",
          "[trainer]") {
  count_cpu_tensor_memory();
  const auto train = synthetic_pairs(64, 1), eval = synthetic_pairs(16, 2);
  // Dense, 4000 x 64 embedding: parameters dominate what is live.
  auto model = parse_model_spec(nlohmann::json{
      {"vocab", 4000}, {"d_model", 64}, {"heads", 2}, {"layers", 1}, {"ffn", 128},
      {"max_positions", 16}, {"classes", 3}, {"dropout", 0.0}});
  TrainConfig c;
  c.epochs = 1;
  c.batch_size = 16;
  c.early.gamma = 0;
  Trainer t(model, c, pairs_data(train, eval), quiet());
  const auto r = t.run();
  const auto params = static_cast<double>(r.epochs.front().size.total_params);
  // By hand: float32 parameters, their gradients and AdamW's two moments live together.
  const double persistent_mb = 4 * params * 4 / 1e6;
  INFO("parameters " << params << ", peak tensor MB " << r.epochs.front().peak_tensor_mb);
  CHECK(params > 4000 * 64);
  CHECK(r.epochs.front().peak_tensor_mb >= persistent_mb);
  CHECK(r.epochs.front().peak_tensor_mb < persistent_mb + 20);  // activations of 16 x 16 tokens
}

TEST_CASE("a second step benchmark in one process measures its peak memory afresh", "[trainer]") {
  // A sweep runs many trials in one process whose heap keeps freed memory (as the CLI sets it):
  // without handing it back first, every later trial's RSS peak read about 0.
  retain_freed_memory();
  const auto model = parse_model_spec(nlohmann::json{
      {"vocab", 1000}, {"d_model", 64}, {"heads", 2}, {"layers", 1}, {"ffn", 256},
      {"max_positions", 64}, {"classes", 3}, {"dropout", 0.1}});
  StepBenchmarkOptions options;
  options.batch = 64;
  options.length = 64;
  options.warmup = 1;
  options.repeats = 1;
  const auto first = benchmark_step(model, tiny_training(), options);
  const auto second = benchmark_step(model, tiny_training(), options);
  // The allocator meter counts live tensor bytes, independently of RSS.
  REQUIRE(first.peak_tensor_mb > 10);
  CHECK(first.peak_mem_mb > 0.5 * first.peak_tensor_mb);
  CHECK(second.peak_mem_mb > 0.5 * second.peak_tensor_mb);
}

TEST_CASE("two trainers in one process give the results each gives alone", "[trainer]") {
  // Dropout on, so each run draws dropout seeds; the second run takes the composite paths
  // (its own fast-kernel switch) while the first takes the fast kernels.
  const auto train = synthetic_pairs(24, 1), eval = synthetic_pairs(8, 2);
  auto first = tiny_training(), second = tiny_training();
  second.seed = 12;
  TrainerOptions fast = quiet(), composite = quiet();
  composite.fast_kernels = false;
  const auto global_before = at::detail::getDefaultCPUGenerator().clone();
  auto alone = [&](const TrainConfig& c, const TrainerOptions& o) {
    return Trainer(tiny_model(), c, pairs_data(train, eval), o).run();
  };
  const auto first_alone = alone(first, fast), second_alone = alone(second, composite);
  // The library leaves the global generator as it found it.
  CHECK(at::equal(at::rand({4}, global_before), at::rand({4})));

  RunResult first_together, second_together;
  std::thread other([&] { second_together = alone(second, composite); });
  first_together = alone(first, fast);
  other.join();
  auto same = [](const RunResult& a, const RunResult& b) {
    REQUIRE(a.epochs.size() == b.epochs.size());
    for (size_t e = 0; e < a.epochs.size(); ++e) {
      CHECK(a.epochs[e].train_loss == b.epochs[e].train_loss);
      CHECK(a.epochs[e].eval_loss == b.epochs[e].eval_loss);
      CHECK(a.epochs[e].size.tensorized == b.epochs[e].size.tensorized);
    }
  };
  same(first_alone, first_together);
  same(second_alone, second_together);
  // The two runs differ (other seeds), so the comparison above could fail.
  CHECK(first_alone.epochs.back().train_loss != second_alone.epochs.back().train_loss);
}
