// The bi-objective losses (METHOD §3): values and gradients against hand-computed ones on a
// tiny TT layer, and the switch to the late stage with its target.
#include "core/layers/size.h"
#include "core/layers/tt_linear.h"
#include "core/training/objective.h"
#include "core/util/config_reader.h"
#include "tests/support/catch.h"

#include <ATen/ATen.h>
#include <torch/autograd.h>
#include <torch/nn/module.h>

using namespace comera;
using Catch::Matchers::Contains;

namespace {

// One TT layer [2,2|2,2], ranks 1,2,3,2,1: core sizes 2,2,2,2, initial exact size
// 1*2*2 + 2*2*3 + 3*2*2 + 2*2*1 = 32, 7 rank entries.
struct TinyModel : torch::nn::Module {
  TinyModel() {
    tt = register_module("tt", TTLinear(TTLinearOptions({2, 2}, {2, 2}, {1, 2, 3, 2, 1})));
  }
  TTLinear tt{nullptr};
};

// d1 = [1, 0.5], d2 = [1, -2, 0.005 (pruned)], d3 = [0.25, 1]: |d1| = 1.5, |d2| = 3, |d3| = 1.25.
// Weighted surrogate 1*2*1.5 + 1.5*2*3 + 3*2*1.25 + 1.25*2*1 = 22.
void set_rank_vectors(TinyModel& m) {
  at::NoGradGuard no_grad;
  auto d = m.tt->rank_vectors();
  d[0].copy_(at::tensor({1.0, 0.5}));
  d[1].copy_(at::tensor({1.0, -2.0, 0.005}));
  d[2].copy_(at::tensor({0.25, 1.0}));
}

double grad_at(const at::Tensor& t, int64_t i) { return t.grad()[i].item<double>(); }

}  // namespace

TEST_CASE("early objective: L + gamma*S/S_init + beta*sum||G||^2, values and gradients",
          "[objectives]") {
  auto holder = std::make_shared<TinyModel>();
  auto& m = *holder;
  set_rank_vectors(m);
  const double gamma = 0.3, beta = 0.05;
  Objective objective(SurrogateKind::Weighted, {gamma, beta}, {}, /*size_scale=*/32, /*initial=*/32);
  auto task = at::scalar_tensor(0.7, at::kDouble).requires_grad_();
  const auto v = objective(task, m);
  double l2 = 0;
  for (const auto& c : m.tt->cores()) l2 += c.pow(2).sum().item<double>();
  CHECK(v.size.item<double>() == Approx(22.0 / 32));
  CHECK(v.total.item<double>() == Approx(0.7 + gamma * 22.0 / 32 + beta * l2));
  v.total.backward();
  CHECK(task.grad().item<double>() == Approx(1.0));
  const auto d = m.tt->rank_vectors();
  // dS/d d1[i] = sign * (n_1 * 1 + n_2 * |d2|) = 2 + 6 = 8.
  CHECK(grad_at(d[0], 0) == Approx(gamma * 8 / 32));
  CHECK(grad_at(d[0], 1) == Approx(gamma * 8 / 32));
  // dS/d d2[i] = sign * (n_2 |d1| + n_3 |d3|) = 3 + 2.5; the pruned entry gets none.
  CHECK(grad_at(d[1], 0) == Approx(gamma * 5.5 / 32));
  CHECK(grad_at(d[1], 1) == Approx(-gamma * 5.5 / 32));
  CHECK(grad_at(d[1], 2) == 0);
  // dS/d d3[i] = n_3 |d2| + n_4 = 6 + 2.
  CHECK(grad_at(d[2], 0) == Approx(gamma * 8 / 32));
  // d(beta ||G||^2)/dG = 2 beta G.
  for (const auto& c : m.tt->cores()) CHECK(at::allclose(c.grad(), 2 * beta * c.detach()));
}

TEST_CASE("early objective with the mean surrogate", "[objectives]") {
  auto holder = std::make_shared<TinyModel>();
  auto& m = *holder;
  set_rank_vectors(m);
  // Mean |d| over the 6 surviving entries: (1.5 + 3 + 1.25) / 6.
  Objective objective(SurrogateKind::Mean, {0.5, 0}, {}, /*size_scale=*/1, /*initial=*/32);
  auto task = at::scalar_tensor(1.0, at::kDouble).requires_grad_();
  const auto v = objective(task, m);
  CHECK(v.size.item<double>() == Approx(5.75 / 6));
  CHECK(v.total.item<double>() == Approx(1.0 + 0.5 * 5.75 / 6));
  v.total.backward();
  CHECK(grad_at(m.tt->rank_vectors()[1], 1) == Approx(-0.5 / 6));
}

TEST_CASE("late objective: achievement scalarisation, gradient on the larger gap", "[objectives]") {
  auto eval = [](double L, double S, double w1, double w2) {
    auto task = at::scalar_tensor(L, at::kDouble).requires_grad_();
    auto size = at::scalar_tensor(S, at::kDouble).requires_grad_();
    auto total = late_objective(task, size, 0.8, 0.2, w1, w2, 0.1);
    total.backward();
    return std::array<double, 3>{total.item<double>(), task.grad().item<double>(),
                                 size.grad().item<double>()};
  };
  // Gaps 0.2 (loss) vs 0.3 (size): size binds. 0.3 + 0.1 * 1.5.
  auto a = eval(1.0, 0.5, 1, 1);
  CHECK(a[0] == Approx(0.45));
  CHECK(a[1] == Approx(0.1));
  CHECK(a[2] == Approx(1.1));
  // Weighting the loss gap 3x makes it bind: 0.6 + 0.15.
  auto b = eval(1.0, 0.5, 3, 1);
  CHECK(b[0] == Approx(0.75));
  CHECK(b[1] == Approx(3.1));
  CHECK(b[2] == Approx(0.1));
  // Both below target: the max is negative, still pulling toward the target point.
  auto c = eval(0.7, 0.1, 1, 1);
  CHECK(c[0] == Approx(-0.1 + 0.1 * 0.8));
}

TEST_CASE("the objective switches to the late stage with S0 from the early-stage size",
          "[objectives]") {
  auto holder = std::make_shared<TinyModel>();
  auto& m = *holder;
  set_rank_vectors(m);
  LateStageConfig late;
  late.enabled = true;
  late.loss_target = 0.5;
  late.size_ratio = 0.25;
  late.omega_loss = 1;
  late.omega_size = 2;
  late.rho = 0;
  Objective objective(SurrogateKind::Weighted, {0.01, 0}, late, 32, 32);
  CHECK_FALSE(objective.late());
  // Exact size now: effective ranks 1,2,2,2,1 -> 4 + 8 + 8 + 4 = 24; S0 = 0.25 * 24 = 6 entries.
  CHECK(exact_size(*m.tt) == 24);
  objective.start_late(static_cast<double>(exact_size(*m.tt)));
  CHECK(objective.late());
  CHECK(objective.size_target() == Approx(6.0 / 32));
  const auto v = objective(at::scalar_tensor(0.6), m);
  // max{0.6 - 0.5, 2 (22/32 - 6/32)} = 1.0
  CHECK(v.total.item<double>() == Approx(1.0));
  // An absolute target overrides the ratio.
  late.size_target = 16;
  Objective absolute(SurrogateKind::Weighted, {0.01, 0}, late, 32, 32);
  absolute.start_late(24);
  CHECK(absolute.size_target() == Approx(0.5));
}

TEST_CASE("a late stage by cuts trains the task loss alone, and its settings are read with clear errors",
          "[objectives]") {
  auto holder = std::make_shared<TinyModel>();
  auto& m = *holder;
  set_rank_vectors(m);
  const auto read = [](const nlohmann::json& late) {
    return read_train_config(ConfigReader({{"epochs", 4}, {"late_stage", late}}, "training")).late;
  };
  const auto late = read({{"start_epoch", 1}, {"control", "cut"}, {"cut_every_steps", 50}});
  CHECK(late.control == LateControl::Cut);
  CHECK(late.cut_every_steps == 50);
  CHECK(late.cut_fraction == 0.5);
  Objective objective(SurrogateKind::Weighted, {0.01, 0}, late, 32, 32);
  objective.start_late(24);
  // The gradient objective here would be max{0.6 - 0.8, 22/32 - 0.2 * 24/32} + 0.01 (0.6 + 22/32).
  CHECK(objective(at::scalar_tensor(0.6), m).total.item<double>() == Approx(0.6));
  CHECK(read({{"start_epoch", 1}}).control == LateControl::Gradient);
  CHECK_THROWS_WITH(read({{"start_epoch", 1}, {"cut_every_steps", 50}}),
                    Contains("training.late_stage") && Contains("apply to control \"cut\""));
  CHECK_THROWS_WITH(read({{"start_epoch", 1}, {"control", "cuts"}}), Contains("training.late_stage.control"));
  CHECK_THROWS_WITH(read({{"start_epoch", 1}, {"control", "cut"}, {"cut_fraction", 0}}),
                    Contains("late_stage.cut_fraction"));
  CHECK_THROWS_WITH(read({{"start_epoch", 1}, {"control", "cut"}, {"cut_every_steps", 1}}),
                    Contains("late_stage.cut_every_steps"));
}
