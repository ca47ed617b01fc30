#include "search/sweep/pruning.h"

#include "core/util/config_reader.h"
#include "core/util/error.h"
#include "core/util/format.h"
#include "search/store/canonical_json.h"
#include "search/store/checks.h"
#include "search/store/epoch_metrics.h"

#include <algorithm>
#include <cmath>

namespace comera::sweep {

namespace {

// How much better `a` is than `b` in `o` (positive: better).
double gain(const store::Objective& o, double a, double b) { return o.minimize ? b - a : a - b; }

std::optional<double> value_of(const EpochValues& v, const std::string& name) {
  const auto it = v.values.find(name);
  if (it == v.values.end() || std::isnan(it->second)) return std::nullopt;
  return it->second;
}

// Pooled within-group standard deviation of each objective (groups of two or more), and how
// many groups gave it; 0 when none did.
std::pair<std::map<std::string, double>, size_t> seed_spread(const std::vector<store::Objective>& objectives,
                                                             const std::vector<EpochValues>& all) {
  std::map<std::string, std::vector<const EpochValues*>> groups;
  for (const auto& v : all) groups[v.group].push_back(&v);
  std::map<std::string, double> sd;
  size_t used = 0;
  for (const auto& o : objectives) {
    double squares = 0, freedom = 0;
    size_t n_groups = 0;
    for (const auto& [group, members] : groups) {
      std::vector<double> xs;
      for (const auto* m : members)
        if (const auto x = value_of(*m, o.name)) xs.push_back(*x);
      if (xs.size() < 2) continue;
      double mean = 0;
      for (double x : xs) mean += x / static_cast<double>(xs.size());
      for (double x : xs) squares += (x - mean) * (x - mean);
      freedom += static_cast<double>(xs.size() - 1);
      ++n_groups;
    }
    sd[o.name] = freedom > 0 ? std::sqrt(squares / freedom) : 0;
    used = std::max(used, n_groups);
  }
  return {sd, used};
}

// A trial's config without its seed: the group of its seed repeats.
std::string seedless(nlohmann::json config) {
  config.erase("seed");
  if (config.contains("point")) config["point"].erase("seed");
  if (config.contains("experiment") && config["experiment"].contains("training"))
    config["experiment"]["training"].erase("seed");
  return store::canonical_json(config);
}

}  // namespace

PruningRule parse_pruning(const nlohmann::json& json, const std::vector<store::Objective>& objectives) {
  const ConfigReader r(json, "pruning");
  PruningRule rule;
  rule.from_epoch = r.integer("from_epoch", rule.from_epoch, 0);
  rule.noise = r.number("noise", rule.noise, 0);
  rule.every_steps = r.integer("every_steps", rule.every_steps, 0);
  rule.late_checks = r.boolean("late_checks", rule.late_checks);
  if (r.has("late_checks") && rule.every_steps == 0)
    throw Error("pruning.late_checks: applies to checks inside epochs; set pruning.every_steps too, or leave it out");
  if (r.has("margin")) {
    const auto& margin = r.value("margin");
    if (!margin.is_object())
      throw Error("pruning.margin: expected {\"objective\": margin, ...}, got " + margin.dump());
    std::string names;
    for (const auto& o : objectives) names += (names.empty() ? "" : ", ") + o.name;
    for (const auto& [name, value] : margin.items()) {
      const bool known = std::any_of(objectives.begin(), objectives.end(),
                                     [&](const store::Objective& o) { return o.name == name; });
      if (!known) throw Error("pruning.margin." + name + ": not an objective of this sweep (" + names + ")");
      if (!value.is_number() || !(value.get<double>() >= 0))
        throw Error("pruning.margin." + name + ": expected a number >= 0 (in the objective's units), got " +
                    value.dump());
      rule.margin[name] = value.get<double>();
    }
  }
  r.finish();
  return rule;
}

nlohmann::json to_json(const PruningRule& rule) {
  nlohmann::json j = {{"from_epoch", rule.from_epoch}, {"margin", rule.margin}, {"noise", rule.noise}};
  if (rule.every_steps > 0) j.update({{"every_steps", rule.every_steps}, {"late_checks", rule.late_checks}});
  return j;
}

std::optional<store::Decision> judge(const PruningRule& rule, const std::vector<store::Objective>& objectives,
                                     const JudgedAt& at, const EpochValues& me, const std::vector<EpochValues>& others) {
  if (at.epoch < rule.from_epoch) return std::nullopt;
  std::vector<EpochValues> all = others;
  all.push_back(me);
  const auto [sd, groups] = seed_spread(objectives, all);
  std::map<std::string, double> margin;
  for (const auto& o : objectives) {
    const auto given = rule.margin.find(o.name);
    margin[o.name] = std::max(given == rule.margin.end() ? 0.0 : given->second, rule.noise * sd.at(o.name));
  }
  nlohmann::json by = nlohmann::json::array();
  std::vector<int64_t> numbers;
  for (const auto& other : others) {
    bool all_better = true, strictly = false;
    for (const auto& o : objectives) {
      const auto a = value_of(other, o.name), b = value_of(me, o.name);
      if (!a || !b) {
        all_better = false;
        break;
      }
      const double g = gain(o, *a, *b);
      all_better = all_better && g >= margin[o.name];
      strictly = strictly || g > 0;
    }
    if (!all_better || !strictly) continue;
    by.push_back({{"trial", other.trial}, {"values", other.values}});
    numbers.push_back(other.trial);
  }
  if (numbers.empty()) return std::nullopt;
  std::string names;
  for (size_t i = 0; i < numbers.size(); ++i) names += (i ? ", " : "") + std::to_string(numbers[i]);
  std::string margins;
  for (const auto& o : objectives) margins += (margins.empty() ? "" : ", ") + o.name + " " + number_text(margin[o.name]);
  store::Decision d;
  d.kind = store::DecisionKind::Pruned;
  d.epoch = at.epoch;
  const std::string where = at.step ? "step " + std::to_string(*at.step) + " (epoch " + std::to_string(at.epoch) + ")"
                                    : "epoch " + std::to_string(at.epoch);
  d.detail = {{"reason", "dominated at " + where + " by trial" +
                             (numbers.size() > 1 ? "s " : " ") + names + " (margins: " + margins + ")"},
              {"dominated_by", by},
              {"values", me.values},
              {"margin", margin},
              {"seed_sd", sd},
              {"seed_groups", groups},
              {"rule", to_json(rule)}};
  if (at.step) d.detail["step"] = *at.step;
  return d;
}

std::optional<store::Decision> judge_trial(store::ResultsDb& db, const PruningRule& rule,
                                           const std::vector<store::Objective>& objectives,
                                           const store::Trial& trial, const JudgedAt& at) {
  if (at.epoch < rule.from_epoch) return std::nullopt;
  for (const auto& d : store::read_decisions(db.sql(), trial.id))
    if (d.kind == store::DecisionKind::Resumed) return std::nullopt;
  auto values = [&](const store::Trial& t, const std::map<std::string, double>& metrics) {
    EpochValues v{t.number, seedless(t.config), {}};
    for (const auto& o : objectives)
      if (const auto it = metrics.find(o.name); it != metrics.end()) v.values[o.name] = it->second;
    return v;
  };
  auto recorded = [&](const store::Trial& t) -> std::optional<EpochValues> {
    if (at.step) {
      const auto checks = store::read_checks(db.sql(), t.id, at.step);
      if (!checks.empty()) return values(t, checks.front().metrics);
    } else {
      for (const auto& e : store::read_epochs(db.sql(), t.id))
        if (e.epoch == at.epoch && !e.metrics.count("partial")) return values(t, e.metrics);
    }
    return std::nullopt;
  };
  std::optional<EpochValues> me;
  std::vector<EpochValues> others;
  for (const auto& t : store::list_trials(db, trial.study)) {
    auto v = recorded(t);
    if (!v) continue;
    if (t.id == trial.id) me = std::move(v);
    else others.push_back(std::move(*v));
  }
  if (!me) return std::nullopt;
  return judge(rule, objectives, at, *me, others);
}

}  // namespace comera::sweep
