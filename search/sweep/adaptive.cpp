#include "search/sweep/adaptive.h"

#include "core/util/error.h"
#include "core/util/format.h"
#include "search/store/canonical_json.h"
#include "search/store/decisions.h"
#include "search/store/epoch_metrics.h"
#include "search/store/objectives.h"
#include "search/store/trial_queue.h"
#include "search/store/trials.h"
#include "search/runs/shared_early_stage.h"
#include "search/sweep/trial_expansion.h"

#include <SQLiteCpp/Column.h>
#include <SQLiteCpp/Statement.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

namespace comera::sweep {

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

bool has_labels(const nlohmann::json& point, const nlohmann::json& label) {
  if (label.empty()) return false;
  for (const auto& [key, value] : label.items())
    if (!point.contains(key) || point[key] != value) return false;
  return true;
}

// The proposer's objective space: every objective minimised, and in log where its values are
// all positive and span a decade or more (sizes from dense to 100x: a front in log size is
// spread evenly over the decades, as SEARCH.md advises for hypervolumes).
struct ObjectiveScale {
  bool negate = false, log = false;
  double to(double v) const {
    const double x = log ? std::log(v) : v;
    return negate ? -x : x;
  }
  double from(double v) const {
    const double x = negate ? -v : v;
    return log ? std::exp(x) : x;
  }
};

std::vector<ObjectiveScale> scales(const std::vector<store::Objective>& objectives,
                                   const std::vector<pareto::Point>& ys) {
  std::vector<ObjectiveScale> out;
  for (size_t k = 0; k < objectives.size(); ++k) {
    double lo = INFINITY, hi = -INFINITY;
    bool positive = true;
    for (const auto& y : ys) {
      if (std::isnan(y[k])) continue;
      positive = positive && y[k] > 0;
      lo = std::min(lo, y[k]), hi = std::max(hi, y[k]);
    }
    out.push_back({!objectives[k].minimize, positive && lo < hi && hi >= 10 * lo});
  }
  return out;
}

int64_t count(store::ResultsDb& db, const std::string& sql, const std::string& study) {
  SQLite::Statement q(db.sql(), sql);
  q.bind(1, study);
  q.executeStep();
  return q.getColumn(0).getInt64();
}

// The objectives a pruned trial had at the epoch it was stopped (its last pruning decision);
// NaN where not recorded, which leaves it a failed point.
pareto::Point pruned_values(store::ResultsDb& db, int64_t trial_id, const std::vector<store::Objective>& objectives) {
  pareto::Point y(objectives.size(), kNaN);
  for (const auto& d : store::read_decisions(db.sql(), trial_id)) {
    if (d.kind != store::DecisionKind::Pruned) continue;
    const auto values = d.detail.value("values", nlohmann::json::object());
    for (size_t k = 0; k < objectives.size(); ++k)
      y[k] = values.contains(objectives[k].name) && values[objectives[k].name].is_number()
                 ? values[objectives[k].name].get<double>()
                 : kNaN;
  }
  return y;
}

// The study's trials whose early stage is kept (search/runs/shared_early_stage.h), at their
// points: a proposal that keeps one of them but for the late axes runs its late stage only.
std::vector<propose::TrainedStage> trained_stages(store::ResultsDb& db, const SweepSpec& spec,
                                                  const std::vector<store::Trial>& trials) {
  std::vector<propose::TrainedStage> out;
  std::set<std::string> seen;
  for (const auto& t : trials) {
    const auto x = point_values(spec, t.config);
    if (!x || !t.config.contains("experiment")) continue;
    const auto e = parse_experiment(t.config.at("experiment"));
    if (!gives_early_stage(db, t, e) || !seen.insert(early_stage_key(e)).second) continue;
    const auto epochs = static_cast<double>(e.training.epochs);
    const double cost = (epochs - static_cast<double>(e.training.late.start_epoch)) / epochs;
    if (cost > 0) out.push_back({*x, "trial " + std::to_string(t.number), cost});
  }
  return out;
}

}  // namespace

propose::Space search_space(const SweepSpec& spec) {
  propose::Space space;
  for (size_t i = 1; i < spec.axes.size(); ++i) {
    const Axis& axis = spec.axes[i];
    propose::SpaceAxis a;
    a.name = axis.name;
    if (axis.range) {
      a.kind = axis.range->integer ? propose::AxisKind::Integer : propose::AxisKind::Real;
      a.min = axis.range->min, a.max = axis.range->max, a.log = axis.range->log;
    } else {
      a.kind = propose::AxisKind::Choice;
      a.choices = static_cast<int64_t>(axis.choices.size());
    }
    space.push_back(a);
  }
  return space;
}

std::optional<propose::Values> point_values(const SweepSpec& spec, const nlohmann::json& config) {
  const auto point = config.value("point", nlohmann::json::object());
  propose::Values values;
  for (size_t i = 1; i < spec.axes.size(); ++i) {
    const Axis& axis = spec.axes[i];
    if (axis.range) {
      if (!point.contains(axis.label) || !point[axis.label].is_number()) return std::nullopt;
      const double v = point[axis.label].get<double>();
      if (v < axis.range->min || v > axis.range->max) return std::nullopt;
      values.push_back(v);
      continue;
    }
    const auto it = std::find_if(axis.choices.begin(), axis.choices.end(),
                                 [&](const Choice& c) { return has_labels(point, c.label); });
    if (it == axis.choices.end()) return std::nullopt;
    values.push_back(static_cast<double>(it - axis.choices.begin()));
  }
  return values;
}

Spent spent(store::ResultsDb& db, const std::string& study) {
  Spent s;
  s.trials = count(db, "SELECT COUNT(*) FROM decisions d JOIN trials t ON t.id = d.trial_id "
                       "JOIN studies s ON s.id = t.study_id WHERE s.name = ? AND d.kind = 'proposed'", study);
  SQLite::Statement e(db.sql(), std::string("SELECT COALESCE(SUM(") + store::kEpochCoverage +
                                   "), 0) FROM epochs e JOIN trials t ON t.id = e.trial_id "
                                   "JOIN studies s ON s.id = t.study_id WHERE s.name = ?");
  e.bind(1, study);
  e.executeStep();
  s.epochs = e.getColumn(0).getDouble();
  SQLite::Statement q(db.sql(), std::string("SELECT COALESCE(SUM(") + store::kTrialSeconds +
                                   "), 0) FROM trials t JOIN studies s ON s.id = t.study_id WHERE s.name = ?");
  q.bind(1, study);
  q.executeStep();
  s.minutes = q.getColumn(0).getDouble() / 60;
  return s;
}

std::string describe_sampling(const SweepSpec& spec) {
  const auto& b = spec.sampling.budget;
  std::string budget;
  if (b.trials) budget += std::to_string(b.trials) + " trials";
  if (b.epochs) budget += (budget.empty() ? "" : ", ") + std::to_string(b.epochs) + " epochs";
  if (b.minutes) budget += (budget.empty() ? "" : ", ") + number_text(b.minutes) + " minutes";
  return "adaptive sampling (" + spec.sampling.sampler + ", seed " + std::to_string(spec.sampling.seed) + "), budget " +
         budget;
}

std::string budget_spent(const Budget& b, const Spent& s) {
  if (b.trials > 0 && s.trials >= b.trials)
    return std::to_string(s.trials) + " trials proposed, the budget's " + std::to_string(b.trials);
  if (b.epochs > 0 && s.epochs >= b.epochs)
    return number_text(s.epochs) + " epochs recorded, the budget's " + std::to_string(b.epochs);
  if (b.minutes > 0 && s.minutes >= b.minutes)
    return number_text(s.minutes) + " minutes of training recorded, the budget's " + number_text(b.minutes);
  return "";
}

StudyHistory study_history(store::ResultsDb& db, const std::string& study, const SweepSpec& spec,
                           const std::vector<store::Objective>& objectives) {
  std::vector<propose::Observation> done;
  std::vector<propose::Values> pending;
  for (const auto& t : store::list_trials(db, study)) {
    auto x = point_values(spec, t.config);
    if (!x) continue;
    switch (t.state) {
      case store::TrialState::Complete: {
        const auto recorded = store::read_objectives(db.sql(), t.id);
        pareto::Point y;
        for (const auto& o : objectives) {
          const auto it = recorded.find(o.name);
          y.push_back(it == recorded.end() ? kNaN : it->second);
        }
        done.push_back({*x, y, "trial " + std::to_string(t.number)});
        break;
      }
      // A pruned trial is observed as it was when stopped: dominated there, so the model
      // learns the region is poor rather than only that its exact point is taken.
      case store::TrialState::Pruned:
        done.push_back({*x, pruned_values(db, t.id, objectives), "trial " + std::to_string(t.number)});
        break;
      // Nothing to learn from but where not to go.
      case store::TrialState::Failed:
      case store::TrialState::Diverged:
        done.push_back({*x, pareto::Point(objectives.size(), kNaN), "trial " + std::to_string(t.number)});
        break;
      default:  // queued, running, killed (to be resumed): someone's point already
        pending.push_back(*x);
    }
  }
  return {done, pending};
}

ProposeOutcome propose_next(store::ResultsDb& db, const store::Study& study, const SweepSpec& spec) {
  return db.write([&]() -> ProposeOutcome {
    const Spent so_far = spent(db, study.name);
    if (const auto why = budget_spent(spec.sampling.budget, so_far); !why.empty())
      return {std::nullopt, "budget spent: " + why};
    const auto objectives = store::parse_objectives(spec.objectives);
    const auto trials = store::list_trials(db, study.name);
    auto [done, pending] = study_history(db, study.name, spec, objectives);
    std::vector<pareto::Point> ys;
    for (const auto& o : done) ys.push_back(o.y);
    const auto scale = scales(objectives, ys);
    for (auto& o : done)
      for (size_t k = 0; k < o.y.size(); ++k)
        if (!std::isnan(o.y[k])) o.y[k] = scale[k].to(o.y[k]);

    propose::ProposerOptions options;
    options.method = spec.sampling.sampler;
    options.seed = spec.sampling.seed;
    options.initial = spec.sampling.initial;
    options.budget = spec.sampling.budget.trials;
    options.trained = trained_stages(db, spec, trials);
    for (size_t i = 1; i < spec.axes.size(); ++i) options.late_axes.push_back(late_only(spec.axes[i]));
    propose::Proposal p;
    const auto& start = spec.sampling.start;
    if (const auto given = static_cast<size_t>(so_far.trials); given < start.size()) {
      p.x = start[given];
      p.method = "start";
      p.reason = "given in the spec (sampling.start, " + std::to_string(given + 1) + " of " +
                 std::to_string(start.size()) + ")";
    } else {
      p = propose::propose(search_space(spec), done, pending, options);
    }
    const auto config = point_trial(spec, point_choices(spec, p.x));
    const auto hash = store::config_hash(config);
    for (const auto& t : trials)
      if (t.config_hash == hash)
        return {std::nullopt, "the proposal " + config["point"].dump() + " repeats trial " + std::to_string(t.number) +
                                  " (the space has no untried point the sampler prefers): no more proposals"};
    const int64_t id = store::enqueue_trials(db, study, {config}).at(0);
    nlohmann::json predicted = nlohmann::json::object();
    for (size_t k = 0; k < p.predicted.size(); ++k) predicted[objectives[k].name] = scale[k].from(p.predicted[k]);
    nlohmann::json between = nlohmann::json::array();
    for (size_t b : p.between) between.push_back(done.at(b).name);
    store::Decision d;
    d.kind = store::DecisionKind::Proposed;
    d.detail = {{"reason", p.method + ": " + p.reason},
                {"method", p.method},
                {"expected_gain", p.expected_gain},
                {"predicted", predicted},
                {"between", between},
                {"point", config["point"]},
                {"history", {{"observed", done.size()}, {"pending", pending.size()}}}};
    store::write_decision(db.sql(), id, d);
    const auto number = store::load_trial(db, id)->number;
    return {id, "proposed trial " + std::to_string(number) + " " + config["point"].dump() + ": " +
                    d.detail["reason"].get<std::string>()};
  });
}

}  // namespace comera::sweep
