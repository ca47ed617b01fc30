#include "search/sweep/trial_expansion.h"

#include "core/models/model_kind.h"
#include "core/training/experiment.h"
#include "core/training/method.h"
#include "core/util/error.h"
#include "core/util/random.h"
#include "search/runs/trial_config.h"
#include "search/runs/trial_recorder.h"
#include "search/store/studies.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

namespace comera::sweep {

namespace {

using Point = std::vector<const Choice*>;  // one choice per axis, in axis order; null: the axis is left out

// Uniform in [0, 1) from 53 random bits (the same on every standard library).
double unit(Rng& rng) { return static_cast<double>(rng.below(uint64_t{1} << 53)) * 0x1p-53; }

// Four significant digits: sampled settings read well in tables and hash stably.
double round4(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", x);
  return std::stod(text);
}

Choice sample(const Axis& axis, Rng& rng) {
  if (!axis.range) return axis.choices[rng.below(axis.choices.size())];
  const Range& r = *axis.range;
  const double u = unit(rng);
  return range_choice(axis, r.log ? std::exp(std::log(r.min) + u * (std::log(r.max) - std::log(r.min)))
                                  : r.min + u * (r.max - r.min));
}

bool is_target(const Axis& axis) { return axis.name.rfind("targets", 0) == 0; }

// The objectives every trial must record: one that cannot would fail at its end, after all its work.
void check_trial(const SweepSpec& spec, const nlohmann::json& trial) {
  ExperimentConfig e;
  try {
    e = parse_experiment(trial["experiment"]);
  } catch (const Error& error) {
    throw Error("sweep " + spec.name + ", trial " + trial["point"].dump() + ": " + error.what());
  }
  const auto recorded = recorded_objectives(e, trial.contains("step"));
  for (const auto& objective : store::parse_objectives(spec.objectives))
    if (const auto why = unrecorded_reason(recorded, objective.name); !why.empty())
      throw Error("sweep " + spec.name + ": objectives: '" + objective.name + "' is not recorded by its " +
                  trial["kind"].get<std::string>() + " trials (" + why +
                  "): choose objectives every trial records, or leave those trials out");
}

enum class Kind { Dense, Early, Point };

// The trial config of a point seen as `kind`: which axes apply, and which sections go.
nlohmann::json make_trial(const SweepSpec& spec, const Point& point, Kind kind) {
  nlohmann::json experiment = spec.base, label = nlohmann::json::object();
  for (size_t i = 0; i < spec.axes.size(); ++i) {
    const Axis& axis = spec.axes[i];
    if (!point[i] || (kind == Kind::Dense && !axis.dense_too) || (kind == Kind::Early && is_target(axis)))
      continue;
    for (const auto& [path, value] : axis.also.items()) set_path(experiment, path, value);
    for (const auto& [path, value] : point[i]->patch.items()) set_path(experiment, path, value);
    label.update(point[i]->label);
  }
  const auto& model_kind = model_kind_of(experiment["model"]);
  if (label.contains(kRankCapLabel))
    experiment["model"] = model_kind.cap_ranks(experiment["model"], label[kRankCapLabel].get<int64_t>());
  auto& training = experiment["training"];
  if (kind == Kind::Early && training.contains("late_stage")) {
    // The early stage alone, as long as it runs in the late-stage trials.
    const auto& late = training["late_stage"];
    if (late.value("start_step", 0) == 0 && late.value("start_epoch", 0) > 0)
      training["epochs"] = late["start_epoch"];
  }
  if (kind != Kind::Point) training.erase("late_stage");
  if (kind == Kind::Dense) {
    experiment.erase("method");  // the baseline of every method on a methods axis
    experiment = dense_build(std::move(experiment));
  }
  auto trial = trial_config(experiment, experiment["training"].value("seed", uint64_t{0}), label);
  if (spec.step)
    trial["step"] = {{"length", spec.step->length}, {"warmup", spec.step->warmup},
                     {"repeats", spec.step->repeats}};
  return trial;
}

// The dense baseline's point: a "set" axis whose setting the dense build drops (tensorized
// ranks, say) changes nothing it trains, so it is left out: one baseline, not one per value.
Point dense_point(const SweepSpec& spec, Point point) {
  const auto experiment = make_trial(spec, point, Kind::Dense)["experiment"];
  for (size_t i = 1; i < point.size(); ++i) {
    if (!point[i] || !spec.axes[i].dense_too) continue;
    Point without = point;
    without[i] = nullptr;
    if (make_trial(spec, without, Kind::Dense)["experiment"] == experiment) point = without;
  }
  return point;
}

// Every combination, the first axis outermost.
std::vector<Point> grid(const SweepSpec& spec) {
  std::vector<Point> points;
  std::vector<size_t> at(spec.axes.size(), 0);
  for (;;) {
    Point p;
    for (size_t i = 0; i < at.size(); ++i) p.push_back(&spec.axes[i].choices[at[i]]);
    points.push_back(p);
    size_t i = at.size();
    while (i > 0 && ++at[i - 1] == spec.axes[i - 1].choices.size()) at[--i] = 0;
    if (i == 0) return points;
  }
}

// `trials` distinct draws of the other axes (kept in `draws`, which the points point into),
// each run under every seed (seeds outermost).
std::vector<Point> random_points(const SweepSpec& spec, std::vector<std::vector<Choice>>& draws) {
  Rng rng(spec.sampling.seed);
  std::set<std::string> seen;
  const int64_t attempts = 50 * spec.sampling.trials;
  for (int64_t a = 0; a < attempts && static_cast<int64_t>(draws.size()) < spec.sampling.trials; ++a) {
    std::vector<Choice> draw;
    nlohmann::json key = nlohmann::json::array();
    for (size_t i = 1; i < spec.axes.size(); ++i) {
      draw.push_back(sample(spec.axes[i], rng));
      key.push_back(draw.back().label);
    }
    if (seen.insert(key.dump()).second) draws.push_back(draw);
  }
  std::vector<Point> points;
  for (const auto& seed : spec.axes[0].choices)
    for (const auto& draw : draws) {
      Point p{&seed};
      for (const auto& choice : draw) p.push_back(&choice);
      points.push_back(p);
    }
  return points;
}

// Adaptive sweeps: the baselines take the base as it is (the seed aside); points come later.
std::vector<Point> seed_only(const SweepSpec& spec) {
  Point p(spec.axes.size(), nullptr);
  p[0] = &spec.axes[0].choices[0];
  return {p};
}

}  // namespace

Choice range_choice(const Axis& axis, double x) {
  const nlohmann::json value = axis.range && axis.range->integer ? nlohmann::json(static_cast<int64_t>(std::llround(x)))
                                                                 : nlohmann::json(round4(x));
  Choice c{{{axis.label, value}}, nlohmann::json::object()};
  if (!axis.path.empty()) c.patch[axis.path] = value;
  return c;
}

namespace {

// An adaptive sweep's points come one at a time, after its baselines: its space is checked
// first, each range at both ends with every listed value, and its start points, so a bad path or
// value is named before any trial runs.
void check_space(const SweepSpec& spec) {
  for (const auto& x : spec.sampling.start) point_trial(spec, point_choices(spec, x));
  for (const bool high : {false, true}) {
    std::vector<double> x;
    for (size_t i = 1; i < spec.axes.size(); ++i) {
      const Axis& axis = spec.axes[i];
      x.push_back(axis.range ? (high ? axis.range->max : axis.range->min) : 0);
    }
    const auto corner = point_choices(spec, x);
    point_trial(spec, corner);
    for (size_t i = 1; i < spec.axes.size(); ++i)
      for (size_t c = 1; c < spec.axes[i].choices.size(); ++c) {
        auto other = corner;
        other[i - 1] = spec.axes[i].choices[c];
        point_trial(spec, other);
      }
  }
}

}  // namespace

std::vector<Choice> point_choices(const SweepSpec& spec, const std::vector<double>& x) {
  std::vector<Choice> choices;
  for (size_t i = 1; i < spec.axes.size(); ++i) {
    const Axis& axis = spec.axes[i];
    choices.push_back(axis.range ? range_choice(axis, x.at(i - 1))
                                 : axis.choices.at(static_cast<size_t>(std::llround(x.at(i - 1)))));
  }
  return choices;
}

std::vector<nlohmann::json> expand_trials(const SweepSpec& spec) {
  if (spec.sampling.adaptive) check_space(spec);
  std::vector<std::vector<Choice>> draws;
  const auto points = spec.sampling.adaptive ? seed_only(spec)
                      : spec.sampling.random ? random_points(spec, draws)
                                             : grid(spec);
  std::vector<nlohmann::json> trials;
  std::set<std::string> seen;
  auto add = [&](const Point& p, Kind kind) {
    auto trial = make_trial(spec, p, kind);
    if (!seen.insert(trial.dump()).second) return;
    check_trial(spec, trial);
    trials.push_back(std::move(trial));
  };
  if (spec.dense_baseline)
    for (const auto& p : points) add(dense_point(spec, p), Kind::Dense);
  if (spec.early_baseline)
    for (const auto& p : points) add(p, Kind::Early);
  if (!spec.sampling.adaptive)
    for (const auto& p : points) add(p, Kind::Point);
  return trials;
}

bool late_only(const Axis& axis) {
  std::vector<std::string> paths;
  if (!axis.path.empty()) paths.push_back(axis.path);
  for (const auto& c : axis.choices)
    for (const auto& [path, value] : c.patch.items()) paths.push_back(path);
  for (const auto& [path, value] : axis.also.items()) paths.push_back(path);
  const std::string late = "training.late_stage.";
  return !paths.empty() && std::all_of(paths.begin(), paths.end(), [&](const std::string& p) {
    return p.rfind(late, 0) == 0 && p != late + "start_epoch" && p != late + "start_step";
  });
}

nlohmann::json point_trial(const SweepSpec& spec, const std::vector<Choice>& choices) {
  if (choices.size() + 1 != spec.axes.size())
    throw Error("point_trial: " + std::to_string(choices.size()) + " choices for " +
                std::to_string(spec.axes.size() - 1) + " axes");
  Point p = {&spec.axes[0].choices[0]};
  for (const auto& c : choices) p.push_back(&c);
  auto trial = make_trial(spec, p, Kind::Point);
  check_trial(spec, trial);
  return trial;
}

}  // namespace comera::sweep
