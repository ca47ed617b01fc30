#include "search/sweep/sweep_spec.h"

#include "core/models/model_kind.h"
#include "core/util/config_reader.h"
#include "core/util/error.h"
#include "core/util/format.h"
#include "search/propose/proposer.h"
#include "search/runs/trial_recorder.h"
#include "search/store/studies.h"
#include "search/sweep/published_figures.h"
#include "search/sweep/shape_choices.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

namespace comera::sweep {

namespace {

namespace fs = std::filesystem;

bool is_range(const nlohmann::json& v) { return v.is_object() && v.contains("min"); }

// A numeric axis: a non-empty list of numbers, or {"min", "max", "log", "integer"} for random or
// adaptive sampling.
Axis number_axis(const ConfigReader& axes, const std::string& key, const std::string& label,
                 const std::string& path, double min, double max) {
  Axis axis{key, {}, std::nullopt, label, path, false, {}};
  const auto& v = axes.value(key);
  if (is_range(v)) {
    const ConfigReader r(v, axes.key_path(key));
    Range range{r.number("min", 0, min, max), r.number("max", 0, min, max), r.boolean("log", false),
                r.boolean("integer", false)};
    r.finish();
    if (range.integer && (range.min != std::floor(range.min) || range.max != std::floor(range.max)))
      throw Error(r.path() + ": an integer range needs whole-number bounds (fix min and max)");
    if (range.max < range.min || (range.log && range.min <= 0))
      throw Error(r.path() + ": need min <= max" + (range.log ? " and min > 0 for a log range" : "") +
                  " (fix the bounds)");
    axis.range = range;
    return axis;
  }
  if (!v.is_array() || v.empty())
    throw Error(axes.key_path(key) + ": expected a non-empty list of numbers or a range " +
                "{\"min\": .., \"max\": .., \"log\": false}, got " + v.dump());
  for (const auto& x : v) {
    if (!x.is_number() || x.get<double>() < min || x.get<double>() > max)
      throw Error(axes.key_path(key) + ": entry " + x.dump() + " is not a number in [" +
                  std::to_string(min) + ", " + std::to_string(max) + "] (fix that entry)");
    axis.choices.push_back({{{label, x}}, {{path, x}}});
  }
  return axis;
}

// (L0, S0) targets: a grid {"loss": [...], "size_ratio" | "size": [...]} (two axes), or a list
// of pairs [{"loss": .., "size_ratio" | "size": ..}, ...] (one axis).
void target_axes(const ConfigReader& axes, std::vector<Axis>& out) {
  const std::string loss = "training.late_stage.loss_target";
  const std::string ratio = "training.late_stage.size_ratio", size = "training.late_stage.size_target";
  const auto& v = axes.value("targets");
  if (v.is_object()) {
    const ConfigReader t(v, axes.key_path("targets"));
    if (t.has("size_ratio") == t.has("size"))
      throw Error(t.path() + ": give S0 as \"size_ratio\" (of the early-stage size) or as \"size\" "
                  "(core entries), exactly one of them");
    out.push_back(number_axis(t, "loss", "loss_target", loss, 0, INFINITY));
    out.back().name = "targets.loss";
    const bool by_ratio = t.has("size_ratio");
    out.push_back(by_ratio ? number_axis(t, "size_ratio", "size_ratio", ratio, 0, 1)
                           : number_axis(t, "size", "size_target", size, 1, INFINITY));
    out.back().name = by_ratio ? "targets.size_ratio" : "targets.size";
    // The base may give S0 the other way; the trainer takes only one.
    out.back().also = {{by_ratio ? size : ratio, nullptr}};
    t.finish();
    return;
  }
  if (!v.is_array() || v.empty())
    throw Error(axes.key_path("targets") + ": expected a grid {\"loss\": [..], \"size_ratio\": [..]} "
                "or a list of pairs [{\"loss\": .., \"size_ratio\": ..}, ..], got " + v.dump());
  Axis axis{"targets", {}, std::nullopt, "", "", false, {}};
  for (size_t i = 0; i < v.size(); ++i) {
    const ConfigReader p(v[i], axes.key_path("targets") + "[" + std::to_string(i) + "]");
    const double l0 = p.number("loss", 0);
    if (!p.has("loss") || p.has("size_ratio") == p.has("size"))
      throw Error(p.path() + ": a pair needs \"loss\" and one of \"size_ratio\", \"size\"");
    Choice c{{{"loss_target", l0}}, {{loss, l0}}};
    if (p.has("size_ratio")) {
      const double r = p.number("size_ratio", 0, 0, 1);
      c.label["size_ratio"] = r, c.patch[ratio] = r, c.patch[size] = nullptr;
    } else {
      const double s = p.number("size", 0, 1);
      c.label["size_target"] = s, c.patch[size] = s, c.patch[ratio] = nullptr;
    }
    p.finish();
    axis.choices.push_back(c);
  }
  out.push_back(axis);
}

Axis list_axis(const ConfigReader& axes, const std::string& key) {
  const auto& v = axes.value(key);
  if (!v.is_array() || v.empty())
    throw Error(axes.key_path(key) + ": expected a non-empty list, got " + v.dump());
  return Axis{key, {}, std::nullopt, "", "", false, {}};
}

Axis seed_axis(const ConfigReader& axes, uint64_t base_seed) {
  Axis axis{"seeds", {}, std::nullopt, "", "", true, {}};
  std::vector<int64_t> seeds;
  if (axes.has("seeds") && axes.has("repeats"))
    throw Error(axes.key_path("seeds") + ": give seeds or repeats, not both");
  if (axes.has("seeds")) {
    seeds = axes.integers("seeds", 0);
  } else {
    const int64_t repeats = axes.integer("repeats", 1, 1);
    for (int64_t i = 0; i < repeats; ++i) seeds.push_back(static_cast<int64_t>(base_seed) + i);
  }
  for (int64_t s : seeds) axis.choices.push_back({{{"seed", s}}, {{"training.seed", s}}});
  return axis;
}

// Figures to overlay: {"label", objective name -> number or JSON pointer}.
nlohmann::json published_points(const ConfigReader& r, const std::string& reference) {
  const auto& v = r.value("published");
  if (!v.is_array()) throw Error(r.key_path("published") + ": expected a list of objects");
  PublishedFigures figures(reference);
  nlohmann::json out = nlohmann::json::array();
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string where = r.key_path("published") + "[" + std::to_string(i) + "]";
    if (!v[i].is_object() || !v[i].contains("label") || !v[i]["label"].is_string())
      throw Error(where + ": expected {\"label\": \"...\", \"<objective>\": value, ...}");
    nlohmann::json point = v[i];
    for (auto& [key, value] : point.items())
      if (key != "label") value = figures.number(value, where + "." + key);
    out.push_back(point);
  }
  return out;
}

// The model kind and task of a base experiment (their defaults when unset): they say which
// evaluation metrics, beyond the common ones, its trials record.
struct BaseTask {
  const ModelKind& kind;
  TaskSpec task;
};
BaseTask base_task(const nlohmann::json& base) {
  const auto model = base.value("model", nlohmann::json::object());
  const auto training = base.value("training", nlohmann::json::object());
  auto text = [](const nlohmann::json& section, const char* key, const std::string& fallback) {
    return section.is_object() && section.contains(key) && section.at(key).is_string()
               ? section.at(key).get<std::string>() : fallback;
  };
  TaskSpec task;
  task.kind = text(training, "task", task.kind);
  return {find_model_kind(text(model, "kind", "transformer")), task};
}

// sampling.start: [{axis name: value, ...}, ...], every axis but the seeds given, as the
// proposer's values (a range's number, a list's index).
std::vector<std::vector<double>> start_points(const nlohmann::json& start, const std::vector<Axis>& axes) {
  std::string names;
  for (size_t i = 1; i < axes.size(); ++i) names += (i > 1 ? ", " : "") + axes[i].name;
  if (!start.is_array() || start.empty())
    throw Error("sampling.start: expected a list of points, e.g. [{\"" + axes.back().name + "\": ...}] (the axes: " +
                names + ")");
  std::vector<std::vector<double>> out;
  for (size_t k = 0; k < start.size(); ++k) {
    const std::string at = "sampling.start[" + std::to_string(k) + "]";
    const auto& point = start[k];
    if (!point.is_object()) throw Error(at + ": expected {axis: value, ...} (the axes: " + names + ")");
    for (const auto& [key, unused] : point.items()) {
      (void)unused;
      if (std::none_of(axes.begin() + 1, axes.end(), [&](const Axis& a) { return a.name == key; }))
        throw Error(at + "." + key + ": not an axis of this sweep (the axes: " + names + ")");
    }
    std::vector<double> x;
    for (size_t i = 1; i < axes.size(); ++i) {
      const Axis& axis = axes[i];
      if (!point.contains(axis.name)) throw Error(at + ": " + axis.name + " is missing (give every axis a value)");
      const auto& v = point[axis.name];
      if (axis.range) {
        const auto& range = *axis.range;
        const bool fits = v.is_number() && v.get<double>() >= range.min && v.get<double>() <= range.max &&
                          (!range.integer || v.get<double>() == std::floor(v.get<double>()));
        if (!fits)
          throw Error(at + "." + axis.name + ": " + v.dump() + " is not in its range [" + number_text(range.min) +
                      ", " + number_text(range.max) + "]" + (range.integer ? " of whole numbers" : ""));
        x.push_back(v.get<double>());
        continue;
      }
      const auto value_of = [](const Choice& c) { return c.label.size() == 1 ? c.label.begin().value() : c.label; };
      const auto it = std::find_if(axis.choices.begin(), axis.choices.end(),
                                   [&](const Choice& c) { return value_of(c) == v; });
      if (it == axis.choices.end()) {
        std::string values;
        for (const auto& c : axis.choices) values += (values.empty() ? "" : ", ") + value_of(c).dump();
        throw Error(at + "." + axis.name + ": " + v.dump() + " is not one of its values (" + values + ")");
      }
      x.push_back(static_cast<double>(it - axis.choices.begin()));
    }
    if (std::find(out.begin(), out.end(), x) != out.end()) throw Error(at + ": repeats an earlier start point");
    out.push_back(std::move(x));
  }
  return out;
}

}  // namespace

void set_path(nlohmann::json& target, const std::string& dotted, const nlohmann::json& value) {
  nlohmann::json* node = &target;
  size_t start = 0;
  for (size_t dot; (dot = dotted.find('.', start)) != std::string::npos; start = dot + 1) {
    node = &(*node)[dotted.substr(start, dot - start)];
    if (node->is_null()) *node = nlohmann::json::object();
    if (!node->is_object())
      throw Error("setting " + dotted + ": " + dotted.substr(0, dot) + " is not an object");
  }
  if (value.is_null())
    node->erase(dotted.substr(start));
  else
    (*node)[dotted.substr(start)] = value;
}

SweepSpec parse_sweep_spec(const nlohmann::json& json, const std::string& file,
                           const std::string& reference) {
  try {
    const ConfigReader r(json, "");
    SweepSpec spec;
    nlohmann::json start;  // sampling.start, read once the axes are known
    spec.file = file;
    spec.name = r.string("name", file.empty() ? "" : fs::path(file).stem().string());
    if (spec.name.empty()) throw Error("name: missing (name the study, e.g. \"quickstart\")");
    spec.description = r.string("description", "");

    const auto& base = r.value("base");
    if (base.is_string()) {
      const fs::path folder = file.empty() ? fs::current_path() : fs::path(file).parent_path();
      spec.base_file = (folder / base.get<std::string>()).string();
      spec.base = read_json_file(spec.base_file);
    } else if (base.is_object()) {
      spec.base = base;
    } else {
      throw Error("base: expected an experiment file (relative to the spec) or an inline "
                  "experiment object, got " + base.dump());
    }

    if (r.has("overrides")) {
      // Fixed changes to the base for every trial, by dotted path; they label no point.
      const auto& overrides = r.value("overrides");
      if (!overrides.is_object())
        throw Error("overrides: expected {\"dotted.path\": value, ...}, got " + overrides.dump());
      for (const auto& [path, value] : overrides.items()) set_path(spec.base, path, value);
    }

    if (r.has("sampling")) {
      const auto s = r.object("sampling");
      const auto method = s.choice("method", "grid", {"grid", "random", "adaptive"});
      spec.sampling.random = method == "random";
      spec.sampling.adaptive = method == "adaptive";
      spec.sampling.trials = s.integer("trials", 0, spec.sampling.random ? 1 : 0);
      spec.sampling.seed = static_cast<uint64_t>(s.integer("seed", 0));
      if (spec.sampling.random != s.has("trials"))
        throw Error(s.path() + ": random sampling needs \"trials\" (how many points), " + method +
                    " sampling takes none");
      if (spec.sampling.adaptive) {
        const auto b = s.object("budget");
        spec.sampling.budget = {b.integer("trials", 0), b.integer("epochs", 0), b.number("minutes", 0)};
        b.finish();
        const auto& budget = spec.sampling.budget;
        if (budget.trials == 0 && budget.epochs == 0 && budget.minutes == 0)
          throw Error(b.path() + ": give what the sweep may spend: \"trials\" (proposed), \"epochs\" "
                      "(recorded by all its trials) or \"minutes\" (of training), one or more");
        spec.sampling.sampler = s.choice("sampler", spec.sampling.sampler, propose::proposer_methods());
        spec.sampling.initial = s.integer("initial", 0);
        if (s.has("start")) start = s.value("start");
      } else {
        for (const char* key : {"budget", "sampler", "initial", "start"})
          if (s.has(key))
            throw Error(s.key_path(key) + ": only read with \"method\": \"adaptive\" (drop it, or sample adaptively)");
      }
      s.finish();
    }

    if (r.choice("measure", "training", {"training", "step"}) == "step") {
      StepMeasure step;
      if (r.has("step")) {
        const auto m = r.object("step");
        step.length = m.integer("length", step.length, 1);
        step.warmup = m.integer("warmup", step.warmup, 0);
        step.repeats = m.integer("repeats", step.repeats, 1);
        m.finish();
      }
      spec.step = step;
    } else if (r.has("step")) {
      throw Error("step: only read with \"measure\": \"step\" (add it, or drop \"step\")");
    }
    spec.objectives = r.string("objectives", spec.step ? "step_time_ms:min,peak_tensor_mb:min"
                                                       : "eval_loss:min,size:min");
    // A name no trial records would fail every trial at its end.
    const auto [kind, task] = base_task(spec.base);
    const auto known = recorded_objectives(spec.step.has_value(), kind.eval_metrics(task));
    for (const auto& objective : store::parse_objectives(spec.objectives))
      if (std::find(known.begin(), known.end(), objective.name) == known.end()) {
        std::string names;
        for (const auto& name : known) names += (names.empty() ? "" : ", ") + name;
        throw Error("objectives: '" + objective.name + "' is not recorded by " +
                    (spec.step ? std::string("step-measuring")
                               : kind.name() + " model's " + task.kind + " training") +
                    " trials; use one of " + names);
      }

    if (r.has("pruning")) {
      if (spec.step) throw Error("pruning: step-measuring trials have no epochs to judge (drop \"pruning\")");
      spec.pruning = parse_pruning(r.value("pruning"), store::parse_objectives(spec.objectives));
    }

    const auto axes = r.object("axes");
    const nlohmann::json& base_training = spec.base.value("training", nlohmann::json::object());
    spec.axes.push_back(seed_axis(axes, base_training.value("seed", uint64_t{0})));
    if (axes.has("set")) {
      // Any other setting, by dotted path: {"training.optimizer.lr_cores": [1e-4, 3e-4]}.
      const auto set = axes.object("set");
      for (const auto& [key, values] : axes.value("set").items()) {
        const bool numeric = is_range(values) || (values.is_array() && !values.empty() &&
                                                  values[0].is_number());
        Axis axis = numeric ? number_axis(set, key, key, key, -INFINITY, INFINITY)
                            : list_axis(set, key);
        if (!numeric)
          for (const auto& v : values) axis.choices.push_back({{{key, v}}, {{key, v}}});
        axis.name = "set." + key;
        axis.dense_too = true;
        spec.axes.push_back(axis);
      }
    }
    if (axes.has("shapes")) {
      Axis axis = list_axis(axes, "shapes");
      axis.choices = shape_choices(axes.value("shapes"), spec.base, axes.key_path("shapes"));
      spec.axes.push_back(axis);
    }
    if (axes.has("rank_cap")) {
      if (is_range(axes.value("rank_cap"))) {
        // The cap is applied after the shape (make_trial), so the range labels and patches nothing.
        Axis axis = number_axis(axes, "rank_cap", kRankCapLabel, "", 1, INFINITY);
        axis.range->integer = true;
        if (axis.range->min != std::floor(axis.range->min) || axis.range->max != std::floor(axis.range->max))
          throw Error(axes.key_path("rank_cap") + ": rank caps are whole numbers (fix min and max)");
        spec.axes.push_back(axis);
      } else {
        Axis axis = list_axis(axes, "rank_cap");
        for (int64_t cap : axes.integers("rank_cap", 1))
          axis.choices.push_back({{{kRankCapLabel, cap}}, nlohmann::json::object()});
        spec.axes.push_back(axis);
      }
    }
    if (axes.has("contraction")) {
      Axis axis = list_axis(axes, "contraction");
      for (const auto& v : axes.value("contraction")) {
        const std::string policy = v.is_string() ? v.get<std::string>() : v.dump();
        if (policy != "tuned" && policy != "merged" && policy != "core-by-core" &&
            policy != "reconstruct")
          throw Error(axes.key_path("contraction") + ": unknown policy " + v.dump() +
                      " (use tuned, merged, core-by-core or reconstruct)");
        axis.choices.push_back({{{"contraction", policy}}, {{kContractionPath, policy}}});
      }
      spec.axes.push_back(axis);
    }
    if (axes.has("gamma"))
      spec.axes.push_back(number_axis(axes, "gamma", "gamma", "training.early_stage.gamma", 0, INFINITY));
    if (axes.has("beta"))
      spec.axes.push_back(number_axis(axes, "beta", "beta", "training.early_stage.beta", 0, INFINITY));
    if (axes.has("targets")) {
      if (!base_training.contains("late_stage"))
        throw Error(axes.key_path("targets") + ": the base experiment has no training.late_stage "
                    "(add one there with start_epoch, when the late stage begins)");
      target_axes(axes, spec.axes);
    }
    axes.finish();
    if (spec.sampling.adaptive && spec.axes[0].choices.size() != 1)
      throw Error("axes.seeds: adaptive sampling proposes one trial at a time, under one seed (give "
                  "one seed; repeat the study under another name for more)");
    if (spec.sampling.adaptive && spec.axes.size() < 2)
      throw Error("axes: adaptive sampling needs an axis to search (a range or a list besides the seed)");
    for (const auto& axis : spec.axes)
      if (axis.range && !spec.sampling.random && !spec.sampling.adaptive)
        throw Error("axes." + axis.name + ": a range needs random or adaptive sampling (set \"sampling\": "
                    "{\"method\": \"random\", \"trials\": N}) or list the values");
    if (!start.is_null()) spec.sampling.start = start_points(start, spec.axes);

    if (r.has("baselines")) {
      const auto& b = r.value("baselines");
      if (!b.is_array()) throw Error("baselines: expected a list such as [\"dense\", \"early\"]");
      for (const auto& kind : b) {
        if (kind == "dense") spec.dense_baseline = true;
        else if (kind == "early") spec.early_baseline = true;
        else throw Error("baselines: unknown baseline " + kind.dump() + " (use \"dense\", \"early\")");
      }
    }
    if (r.has("published")) spec.published = published_points(r, reference);
    r.finish();
    spec.source = json;
    spec.source["base"] = spec.base;
    spec.source["published"] = spec.published;
    return spec;
  } catch (const Error& e) {
    throw Error((file.empty() ? std::string("sweep spec") : file) + ": " + e.what());
  }
}

std::vector<std::string> recorded_objectives(bool step_measure,
                                             const std::vector<std::string>& task_metrics) {
  return step_measure ? step_objective_names() : recorded_metric_names(task_metrics);
}

SweepSpec load_sweep_spec(const std::string& file, const std::string& reference) {
  return parse_sweep_spec(read_json_file(file), file, reference);
}

}  // namespace comera::sweep
