#include "search/pareto/study_front.h"

#include "core/util/error.h"
#include "search/store/decisions.h"
#include "search/store/export_table.h"
#include "search/store/trial_outcome.h"

#include <algorithm>
#include <cmath>

namespace comera::pareto {

namespace {

int column_of(const store::FlatTable& table, const std::string& name) {
  const auto it = std::find(table.columns.begin(), table.columns.end(), name);
  return it == table.columns.end() ? -1 : static_cast<int>(it - table.columns.begin());
}

// Negates maximised objectives, so that everything is minimised.
Point minimised(const Point& p, const std::vector<store::Objective>& objectives) {
  Point out = p;
  for (size_t k = 0; k < out.size(); ++k)
    if (!objectives[k].minimize) out[k] = -out[k];
  return out;
}

// An axis label with the metric's unit.
std::string axis_label(const std::string& metric) {
  static const std::map<std::string, std::string> labels = {
      {"size", "size (parameters)"},
      {"tensorized_size", "tensorized size (core entries)"},
      {"size_mb", "size (MB, float32)"},
      {"accuracy", "eval accuracy (share of examples right)"},
      {"train_accuracy", "train accuracy (share of examples right)"},
      {"eval_loss", "eval loss (cross-entropy, nats)"},
      {"train_loss", "train loss (cross-entropy, nats)"},
      {"compression", "compression (x fewer parameters than dense)"},
      {"step_time_ms", "step time (ms)"},
      {"step_time_min_ms", "fastest step time (ms)"},
      {"peak_mem_mb", "peak memory (MB RSS)"},
      {"peak_tensor_mb", "peak tensor memory (MB)"},
      {"tokens_per_s", "throughput (tokens/s)"},
      {"elapsed_s", "training time (s)"}};
  const auto it = labels.find(metric);
  return it == labels.end() ? metric : it->second;
}

}  // namespace

FrontResult study_front(store::ResultsDb& db, const FrontQuery& query) {
  const auto study = store::require_study(db, query.study);
  FrontResult result;
  result.study = study.name;
  result.objectives =
      store::parse_objectives(query.objectives.empty() ? study.objectives : query.objectives);
  result.published = study.spec.value("published", nlohmann::json::array());
  const size_t dims = result.objectives.size();
  if (!query.reference.empty() && query.reference.size() != dims)
    throw Error("--ref has " + std::to_string(query.reference.size()) + " values for " +
                std::to_string(dims) + " objectives (give one per objective, in order)");

  const store::FlatTable all = store::export_table(db, store::ExportGrain::Trial, study.name);
  const int state = column_of(all, "state");
  std::vector<int> objective_columns;
  for (const auto& o : result.objectives) {
    objective_columns.push_back(column_of(all, "objective." + o.name));
    if (objective_columns.back() < 0 && !all.rows.empty()) {
      std::string recorded;
      for (const auto& c : all.columns)
        if (c.rfind("objective.", 0) == 0) recorded += (recorded.empty() ? "" : ", ") + c.substr(10);
      throw Error("no trial of study '" + study.name + "' recorded objective '" + o.name +
                  "' (recorded: " + (recorded.empty() ? "none yet" : recorded) + ")");
    }
  }

  // Display columns: the trial (number in the study, id in the database), what it is, its point,
  // the objectives asked for, the others.
  std::vector<std::pair<std::string, int>> shown = {
      {"trial", column_of(all, "number")}, {"id", column_of(all, "trial_id")}, {"state", state}};
  for (size_t c = 0; c < all.columns.size(); ++c)
    if (all.columns[c].rfind("config.point.", 0) == 0) {
      shown.push_back({all.columns[c].substr(13), static_cast<int>(c)});
      result.point.push_back(shown.back().first);
    }
  for (size_t k = 0; k < dims; ++k) shown.push_back({result.objectives[k].name, objective_columns[k]});
  for (size_t c = 0; c < all.columns.size(); ++c) {
    const auto& name = all.columns[c];
    if (name.rfind("objective.", 0) == 0 &&
        std::none_of(result.objectives.begin(), result.objectives.end(),
                     [&](const store::Objective& o) { return "objective." + o.name == name; }))
      shown.push_back({name.substr(10), static_cast<int>(c)});
  }
  for (const auto& [name, column] : shown)
    if (column >= 0) result.trials.columns.push_back(name);
  result.trials.columns.insert(result.trials.columns.begin() + 2, "kind");
  // How each trial ended beside its numbers: the late-stage target, how close it came to S0 and
  // to L0, lost layers.
  for (const char* name : {"target", "size_vs_s0", "loss_vs_l0", "notes", "proposed"}) result.trials.columns.push_back(name);
  const int trial_id = column_of(all, "trial_id");

  std::vector<Point> points;
  for (size_t r : filter_rows(all, query.where)) {
    const auto& row = all.rows[r];
    const std::string s = row[state].get<std::string>();
    const int64_t id = row[trial_id].get<int64_t>();
    // The last decision of a kind, as one line (its reason alone for a proposal, in its column).
    auto last = [&](store::DecisionKind kind) {
      std::string text;
      for (const auto& d : store::read_decisions(db.sql(), id))
        if (d.kind == kind)
          text = kind == store::DecisionKind::Proposed ? d.detail.value("reason", std::string()) : store::describe(d);
      return text;
    };
    if (s != "complete") {
      ++result.left_out[s];
      if (s == "pruned")
        result.pruned.push_back({row[column_of(all, "number")].get<int64_t>(), id, last(store::DecisionKind::Pruned)});
      continue;
    }
    // A complete trial that recorded no value of an asked objective (the dense baseline has no
    // loss_target) has no place on these axes: left out, saying which.
    std::string missing;
    for (size_t k = 0; k < dims; ++k)
      if (row[objective_columns[k]].is_null()) missing += (missing.empty() ? "" : ", ") + result.objectives[k].name;
    if (!missing.empty()) {
      ++result.left_out["complete, no " + missing];
      continue;
    }
    const auto trial = store::load_trial(db, id);
    const auto outcome = trial ? store::trial_outcome(db, *trial) : store::TrialOutcome();
    std::vector<nlohmann::json> cells;
    for (const auto& [name, column] : shown)
      if (column >= 0) cells.push_back(row[column]);
    cells.insert(cells.begin() + 2, outcome.kind);
    cells.push_back(outcome.target_text());
    for (double v : {outcome.size_vs_target, outcome.loss_vs_target})
      cells.push_back(std::isfinite(v) ? nlohmann::json(v) : nlohmann::json());
    cells.push_back(outcome.notes());
    cells.push_back(last(store::DecisionKind::Proposed));
    result.trials.rows.push_back(std::move(cells));
    Point p;
    for (int column : objective_columns) p.push_back(cell_number(row[column]));
    result.values.push_back(p);
    points.push_back(minimised(p, result.objectives));
  }

  result.on_front.assign(points.size(), false);
  for (size_t i : non_dominated(points)) result.on_front[i] = true;
  const bool any_finite = std::any_of(points.begin(), points.end(), [](const Point& p) {
    return std::all_of(p.begin(), p.end(), [](double x) { return std::isfinite(x); });
  });
  if (!query.reference.empty())
    result.reference = query.reference;
  else if (any_finite)
    result.reference = minimised(default_reference(points), result.objectives);
  if (!result.reference.empty())
    result.hypervolume = hypervolume(points, minimised(result.reference, result.objectives));
  return result;
}

store::FlatTable front_rows(const FrontResult& result) {
  std::vector<size_t> order;
  for (size_t i = 0; i < result.on_front.size(); ++i)
    if (result.on_front[i]) order.push_back(i);
  const bool minimize = result.objectives[0].minimize;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return minimize ? result.values[a][0] < result.values[b][0]
                    : result.values[a][0] > result.values[b][0];
  });
  store::FlatTable table;
  table.columns = result.trials.columns;
  for (size_t i : order) table.rows.push_back(result.trials.rows[i]);
  return table;
}

FrontPlot front_plot(const FrontResult& result) {
  if (result.objectives.size() < 2)
    throw Error("a Pareto plot needs two objectives (give --objectives a,b)");
  const auto& x = result.objectives[0];
  const auto& y = result.objectives[1];
  FrontPlot plot;
  plot.title = "Pareto front of study " + result.study + ": " + y.name + " against " + x.name;
  plot.x_label = axis_label(x.name), plot.y_label = axis_label(y.name);
  plot.x_minimised = x.minimize, plot.y_minimised = y.minimize;
  const int trial = column_of(result.trials, "trial");
  const int id = column_of(result.trials, "id");
  const int kind = column_of(result.trials, "kind");
  const int notes = column_of(result.trials, "notes");
  for (size_t i = 0; i < result.values.size(); ++i) {
    PlotPoint p{result.values[i][0], result.values[i][1], ""};
    if (result.on_front[i]) {
      const auto& row = result.trials.rows[i];
      p.label = "#" + row[trial].dump() + " (id " + row[id].dump() + ") " + row[kind].get<std::string>() +
                (row[notes].get<std::string>().empty() ? "" : " (" + row[notes].get<std::string>() + ")");
      plot.front.push_back(p);
    } else {
      plot.dominated.push_back(p);
    }
  }
  for (const auto& figure : result.published) {
    const double nan = std::nan("");
    PlotPoint p{figure.contains(x.name) ? figure[x.name].get<double>() : nan,
                figure.contains(y.name) ? figure[y.name].get<double>() : nan,
                figure.value("label", std::string())};
    if (std::isfinite(p.x) || std::isfinite(p.y)) plot.published.push_back(p);
  }
  return plot;
}

}  // namespace comera::pareto
