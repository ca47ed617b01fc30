#include "search/report/report_data.h"

#include "core/util/error.h"
#include "search/pareto/front_report.h"
#include "search/pareto/study_front.h"
#include "search/store/flat_table.h"
#include "search/store/kernel_choices.h"
#include "search/store/stored_real.h"
#include "search/store/studies.h"
#include "search/store/trial_listing.h"
#include "search/store/trials.h"

#include <SQLiteCpp/Statement.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

namespace comera::report {

namespace {

using nlohmann::json;

// The settings where `to` differs from `from`, by dotted path: objects are compared key by key,
// anything else (lists of modes or ranks included) as a whole; null marks a setting `to` lacks.
void config_diff(const json& from, const json& to, const std::string& path, json& out) {
  if (from.is_object() && to.is_object()) {
    auto inner = [&path](const std::string& key) { return path.empty() ? key : path + "." + key; };
    for (const auto& [key, value] : to.items()) {
      if (from.contains(key))
        config_diff(from[key], value, inner(key), out);
      else
        out[inner(key)] = value;
    }
    for (const auto& [key, value] : from.items())
      if (!to.contains(key)) out[inner(key)] = nullptr;
  } else if (from != to) {
    out[path] = to;
  }
}

// The metrics of each trial's last recorded epoch: where a trial without objectives (failed,
// killed, still running) is drawn.
std::map<int64_t, json> last_epoch_metrics(store::ResultsDb& db, int64_t study_id) {
  SQLite::Statement q(db.sql(),
                      "WITH last AS (SELECT e.trial_id, MAX(e.epoch) AS epoch FROM epochs e "
                      "JOIN trials t ON t.id = e.trial_id WHERE t.study_id = ? GROUP BY e.trial_id) "
                      "SELECT m.trial_id, m.name, m.value, m.kind FROM last "
                      "JOIN epoch_metrics m ON m.trial_id = last.trial_id AND m.epoch = last.epoch");
  q.bind(1, study_id);
  std::map<int64_t, json> out;
  while (q.executeStep())
    out[q.getColumn(0).getInt64()][q.getColumn(1).getString()] = store::FlatTable::real(store::read_real(q, 2, 3));
  return out;
}

// Keeps `keep` of `n` indices evenly spaced, the first and the last among them.
std::vector<size_t> even_sample(size_t n, size_t keep) {
  std::vector<size_t> out;
  if (n <= keep) {
    for (size_t i = 0; i < n; ++i) out.push_back(i);
  } else if (keep == 1) {
    out.push_back(n - 1);
  } else {
    for (size_t i = 0; i < keep; ++i) out.push_back((i * (n - 1) + (keep - 1) / 2) / (keep - 1));
  }
  return out;
}

// `runs show --json` of the trial, its epochs sampled down to `max_epochs` when it has more.
json detail(store::ResultsDb& db, const store::Trial& trial, size_t max_epochs) {
  json out = store::trial_detail_json(db, trial);
  const json& epochs = out["epochs"];
  if (epochs.size() <= max_epochs) return out;
  json kept = json::array(), ranks = json::object();
  for (size_t i : even_sample(epochs.size(), max_epochs)) {
    kept.push_back(epochs[i]);
    const std::string epoch = std::to_string(epochs[i]["epoch"].get<int64_t>());
    if (out["ranks"].contains(epoch)) ranks[epoch] = out["ranks"][epoch];
  }
  out["sampled_epochs"] = {{"shown", kept.size()}, {"recorded", epochs.size()}};
  out["epochs"] = std::move(kept);
  out["ranks"] = std::move(ranks);
  return out;
}

// Hypervolume (the front's reference) of the first k complete trials to end, for up to
// `points` values of k.
json hypervolume_progress(const pareto::FrontResult& front, const std::map<int64_t, std::string>& ended_at,
                          size_t points) {
  std::vector<std::pair<std::string, size_t>> order;  // (ended_at, row)
  const auto number_column = std::find(front.trials.columns.begin(), front.trials.columns.end(), "trial") -
                             front.trials.columns.begin();
  for (size_t row = 0; row < front.trials.rows.size(); ++row) {
    const int64_t number = front.trials.rows[row][number_column].get<int64_t>();
    const auto it = ended_at.find(number);
    order.emplace_back(it == ended_at.end() ? "" : it->second, row);
  }
  std::stable_sort(order.begin(), order.end());
  pareto::Point reference = front.reference;
  for (size_t k = 0; k < reference.size(); ++k)
    if (!front.objectives[k].minimize) reference[k] = -reference[k];
  json out = json::array();
  std::vector<pareto::Point> seen;
  size_t next = 0;
  for (size_t i : even_sample(order.size(), points)) {
    for (; next <= i; ++next) {
      pareto::Point p = front.values[order[next].second];
      for (size_t k = 0; k < p.size(); ++k)
        if (!front.objectives[k].minimize) p[k] = -p[k];
      seen.push_back(p);
    }
    out.push_back({{"trials", seen.size()},
                   {"ended_at", order[i].first},
                   {"hypervolume", store::FlatTable::real(pareto::hypervolume(seen, reference))}});
  }
  return out;
}

json study_data(store::ResultsDb& db, const store::Study& study, const ReportOptions& options) {
  const auto trials = store::list_trials(db, study.name);
  if (options.on_progress)
    options.on_progress("study " + study.name + ": " + std::to_string(trials.size()) + " trials");
  json out = {{"name", study.name}, {"objectives", study.objectives}};
  json directions = json::object();
  for (const auto& o : store::parse_objectives(study.objectives)) directions[o.name] = o.minimize ? "min" : "max";

  const json base = study.spec.contains("base") ? study.spec["base"]
                    : trials.empty()              ? json()
                                                  : trials.front().config.value("experiment", json());
  // What was trained, in the experiment file's own words (which say when the data is synthetic).
  if (base.is_object())
    out["experiment"] = {{"name", base.value("name", "")}, {"description", base.value("description", "")}};
  const auto last = last_epoch_metrics(db, study.id);
  std::map<int64_t, std::string> ended_at;
  std::map<int64_t, int64_t> id_of;
  std::set<std::string> metrics;
  json rows = json::array();
  for (const auto& t : trials) {
    json row = store::trial_row_json(db, t);
    row["point"] = t.config.value("point", json::object());
    row["diff"] = json::object();
    if (base.is_object()) config_diff(base, t.config.value("experiment", json::object()), "", row["diff"]);
    const auto it = last.find(t.id);
    row["last_epoch"] = it == last.end() ? json::object() : it->second;
    if (!t.error.empty()) row["error"] = t.error;
    for (const auto& [name, value] : row["objectives"].items()) metrics.insert(name);
    for (const auto& [name, value] : row["last_epoch"].items()) metrics.insert(name);
    ended_at[t.number] = t.ended_at;
    id_of[t.number] = t.id;
    rows.push_back(std::move(row));
    if (options.on_progress && rows.size() % 2000 == 0)
      options.on_progress("study " + study.name + ": " + std::to_string(rows.size()) + " of " +
                          std::to_string(trials.size()) + " trials read");
  }
  for (const auto& name : metrics)
    if (!directions.contains(name)) directions[name] = preferred_direction(name);
  out["directions"] = directions;
  out["trials"] = std::move(rows);

  std::vector<int64_t> detailed;
  try {
    pareto::FrontQuery query;
    query.study = study.name;
    const auto front = pareto::study_front(db, query);
    out["front"] = pareto::front_json(front, true);
    out["hypervolume_progress"] = hypervolume_progress(front, ended_at, options.max_progress_points);
    const auto number_column = std::find(front.trials.columns.begin(), front.trials.columns.end(), "trial") -
                               front.trials.columns.begin();
    for (size_t row = 0; row < front.trials.rows.size(); ++row)
      if (front.on_front[row]) detailed.push_back(id_of.at(front.trials.rows[row][number_column].get<int64_t>()));
  } catch (const Error& e) {
    // A study with nothing complete yet, or objectives that nothing recorded, has no front.
    out["front"] = nullptr;
    out["front_error"] = e.what();
    out["hypervolume_progress"] = json::array();
  }
  for (auto t = trials.rbegin(); t != trials.rend() && detailed.size() < options.max_detailed; ++t)
    if (std::find(detailed.begin(), detailed.end(), t->id) == detailed.end()) detailed.push_back(t->id);
  if (detailed.size() > options.max_detailed) detailed.resize(options.max_detailed);
  json details = json::object();
  for (const auto& t : trials)
    if (std::find(detailed.begin(), detailed.end(), t.id) != detailed.end())
      details[std::to_string(t.id)] = detail(db, t, options.max_epochs);
  out["details"] = std::move(details);
  return out;
}

json kernels(store::ResultsDb& db) {
  json out = json::array();
  for (const auto& c : store::list_kernel_choices(db))
    out.push_back({{"layer_modes", c.key.layer_modes},
                   {"ranks", c.key.ranks},
                   {"token_bucket", c.key.token_bucket},
                   {"dtype", c.key.dtype},
                   {"device", c.key.device},
                   {"threads", c.key.threads},
                   {"choice", c.choice},
                   {"median_ms", c.median_ms},
                   {"repeats", c.repeats},
                   {"created_at", c.created_at}});
  return out;
}

// The environments trials ran in, each with how many trials ran there.
json environments(const std::vector<store::Trial>& trials) {
  std::map<std::string, std::pair<json, int64_t>> seen;
  for (const auto& t : trials) {
    if (!t.environment) continue;
    const json env = t.environment->to_json();
    auto& entry = seen[env.dump()];
    entry.first = env;
    ++entry.second;
  }
  json out = json::array();
  for (auto& [key, entry] : seen) {
    json env = entry.first;
    env["trials"] = entry.second;
    out.push_back(std::move(env));
  }
  return out;
}

}  // namespace

std::string preferred_direction(const std::string& metric) {
  static const std::set<std::string> higher = {"accuracy", "train_accuracy", "auc", "compression",
                                               "tokens_per_s", "examples_per_s"};
  return higher.count(metric) ? "max" : "min";
}

json report_data(store::ResultsDb& db, const ReportOptions& options) {
  std::vector<store::Study> studies;
  const auto all = store::list_studies(db);
  if (options.studies.empty()) {
    studies = all;
  } else {
    for (const auto& name : options.studies) {
      try {
        studies.push_back(store::require_study(db, name));
      } catch (const Error& e) {
        throw Error(std::string(e.what()) + "; leave out --study to report every study");
      }
    }
  }
  json out = {{"database", std::filesystem::path(db.path()).filename().string()},
              {"studies", json::array()},
              {"kernels", kernels(db)},
              {"environments", environments(store::list_trials(db))}};
  for (const auto& study : studies) out["studies"].push_back(study_data(db, study, options));
  return out;
}

}  // namespace comera::report
