// The pruning rule on constructed learning curves with hand-computed margins: a trial dominated
// at every epoch is stopped, one whose curve crosses within the margin (and ends on the front,
// checked independently with the Pareto set) never is, seed noise measured by the study widens
// the margin by the hand-computed pooled standard deviation; and the rule's spec errors.
#include "core/util/error.h"
#include "search/pareto/pareto_set.h"
#include "search/sweep/pruning.h"
#include "tests/support/catch.h"

#include <cmath>
#include <limits>

using namespace comera;
using namespace comera::sweep;
using Catch::Matchers::Contains;

namespace {

const std::vector<store::Objective> kLossSize = {{"eval_loss", true}, {"size", true}};

EpochValues values_at(int64_t trial, double loss, double size, const std::string& group = "") {
  return {trial, group.empty() ? "point " + std::to_string(trial) : group, {{"eval_loss", loss}, {"size", size}}};
}

PruningRule rule_with(double loss_margin, double noise = 2, int64_t from_epoch = 1) {
  PruningRule rule;
  rule.margin = {{"eval_loss", loss_margin}};
  rule.noise = noise;
  rule.from_epoch = from_epoch;
  return rule;
}

}  // namespace

TEST_CASE("a trial dominated at every epoch is pruned at the first epoch judged, naming who dominated it",
          "[pruning]") {
  // Trial 1 and trial 2 have the same size; 2 trails by 0.3 nats at every epoch.
  const std::vector<double> one = {1.0, 0.8, 0.7}, two = {1.3, 1.1, 1.0};
  const auto rule = rule_with(0.05);
  for (int64_t e = 1; e <= 3; ++e) {
    const auto d = judge(rule, kLossSize, e, values_at(2, two[e - 1], 100), {values_at(1, one[e - 1], 100)});
    REQUIRE(d);
    CHECK(d->kind == store::DecisionKind::Pruned);
    CHECK(d->epoch == e);
    CHECK(d->detail["dominated_by"].size() == 1);
    CHECK(d->detail["dominated_by"][0]["trial"] == 1);
    CHECK(d->detail["margin"]["eval_loss"] == Approx(0.05));
    CHECK(d->detail["margin"]["size"] == 0.0);
    CHECK_THAT(store::describe(*d), Contains("pruned at epoch " + std::to_string(e) + ": dominated at epoch " +
                                             std::to_string(e) + " by trial 1"));
  }
  // Not before the first epoch judged.
  CHECK_FALSE(judge(rule_with(0.05, 2, 2), kLossSize, 1, values_at(2, 1.3, 100), {values_at(1, 1.0, 100)}));
  // Larger in size, the leader dominates only while it is also smaller.
  CHECK_FALSE(judge(rule, kLossSize, 1, values_at(2, 1.3, 90), {values_at(1, 1.0, 100)}));
}

TEST_CASE("a trial behind within the margin whose curve crosses and ends on the front is never pruned",
          "[pruning]") {
  // Trial 2 is behind by 0.04 at epoch 1 (margin 0.05), level at 2, ahead at the end; it is
  // smaller than trial 3, larger than trial 1.
  const std::vector<std::vector<double>> loss = {{1.00, 0.90, 0.85}, {1.04, 0.90, 0.70}, {1.20, 1.10, 1.00}};
  const std::vector<double> size = {50, 100, 200};
  const auto rule = rule_with(0.05);
  for (int64_t e = 1; e <= 3; ++e) {
    CHECK_FALSE(judge(rule, kLossSize, e, values_at(2, loss[1][e - 1], size[1]),
                      {values_at(1, loss[0][e - 1], size[0]), values_at(3, loss[2][e - 1], size[2])}));
  }
  // Independently: trial 2's final values are on the front of the three.
  std::vector<pareto::Point> final;
  for (size_t i = 0; i < 3; ++i) final.push_back({loss[i][2], size[i]});
  const auto front = pareto::non_dominated(final);
  CHECK(std::find(front.begin(), front.end(), size_t{1}) != front.end());
  // Trial 3, larger and behind by more than the margin throughout, is pruned at epoch 1.
  const auto d = judge(rule, kLossSize, 1, values_at(3, loss[2][0], size[2]), {values_at(1, loss[0][0], size[0]), values_at(2, loss[1][0], size[1])});
  REQUIRE(d);
  CHECK(d->detail["dominated_by"].size() == 2);
}

TEST_CASE("the margin widens to `noise` pooled seed standard deviations the study measured", "[pruning]") {
  // Point A over two seeds: 1.0 and 1.2, so s.d. sqrt(2 * 0.1^2 / 1) = 0.1414; noise 2: 0.2828.
  const std::vector<EpochValues> a = {values_at(1, 1.0, 100, "A"), values_at(2, 1.2, 100, "A")};
  const double sd = std::sqrt(0.02);
  {
    const auto d = judge(rule_with(0, 2), kLossSize, 1, values_at(3, 1.3, 100, "B"), a);
    REQUIRE(d);  // 0.3 behind trial 1 > 0.2828
    CHECK(d->detail["seed_sd"]["eval_loss"] == Approx(sd));
    CHECK(d->detail["margin"]["eval_loss"] == Approx(2 * sd));
    CHECK(d->detail["seed_groups"] == 1);
    CHECK(d->detail["dominated_by"].size() == 1);  // 0.1 behind trial 2: within the noise
  }
  CHECK_FALSE(judge(rule_with(0, 2), kLossSize, 1, values_at(3, 1.25, 100, "B"), a));
  // Without the noise term, any strict loss lead at the same size prunes.
  CHECK(judge(rule_with(0, 0), kLossSize, 1, values_at(3, 1.25, 100, "B"), a));
  // A given margin larger than the noise one stands.
  CHECK_FALSE(judge(rule_with(0.5, 2), kLossSize, 1, values_at(3, 1.3, 100, "B"), a));
}

TEST_CASE("pruning compares maximised objectives the right way round, and NaN or ties with nothing",
          "[pruning]") {
  const std::vector<store::Objective> auc_size = {{"auc", false}, {"size", true}};
  auto auc = [](int64_t trial, double value, double size) {
    return EpochValues{trial, "p" + std::to_string(trial), {{"auc", value}, {"size", size}}};
  };
  PruningRule rule;
  rule.margin = {{"auc", 0.01}};
  CHECK(judge(rule, auc_size, 1, auc(2, 0.70, 100), {auc(1, 0.75, 100)}));
  CHECK_FALSE(judge(rule, auc_size, 1, auc(2, 0.75, 100), {auc(1, 0.70, 100)}));
  CHECK_FALSE(judge(rule, auc_size, 1, auc(2, 0.745, 100), {auc(1, 0.75, 100)}));  // within 0.01
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK_FALSE(judge(rule, auc_size, 1, auc(2, 0.70, 100), {auc(1, nan, 100)}));
  CHECK_FALSE(judge(rule, auc_size, 1, auc(2, nan, 100), {auc(1, 0.75, 100)}));
  // Equal everywhere with no margin: no one is strictly better.
  CHECK_FALSE(judge(PruningRule{}, auc_size, 1, auc(2, 0.7, 100), {auc(1, 0.7, 100)}));
}

TEST_CASE("a pruning spec names the key at fault and the fix", "[pruning]") {
  CHECK(parse_pruning({{"from_epoch", 2}, {"margin", {{"eval_loss", 0.1}}}, {"noise", 1}}, kLossSize).from_epoch == 2);
  CHECK_THROWS_WITH(parse_pruning({{"margin", {{"accuracy", 0.1}}}}, kLossSize),
                    Contains("pruning.margin.accuracy") && Contains("eval_loss, size"));
  CHECK_THROWS_WITH(parse_pruning({{"margin", {{"eval_loss", -1}}}}, kLossSize), Contains(">= 0"));
  CHECK_THROWS_WITH(parse_pruning({{"from_epoch", -1}}, kLossSize), Contains("pruning.from_epoch"));
  CHECK_THROWS_WITH(parse_pruning({{"patience", 3}}, kLossSize), Contains("pruning.patience"));
  CHECK(parse_pruning({{"every_steps", 50}}, kLossSize).every_steps == 50);
  CHECK(parse_pruning({{"every_steps", 50}}, kLossSize).late_checks);
  CHECK_FALSE(parse_pruning({{"every_steps", 50}, {"late_checks", false}}, kLossSize).late_checks);
  CHECK_THROWS_WITH(parse_pruning({{"late_checks", false}}, kLossSize), Contains("pruning.every_steps"));
  CHECK_THROWS_WITH(parse_pruning({{"every_steps", -1}}, kLossSize), Contains("pruning.every_steps"));
}
