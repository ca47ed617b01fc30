#include "search/store/export_table.h"

#include "search/store/epoch_metrics.h"
#include "search/store/objectives.h"
#include "search/store/trials.h"

#include <SQLiteCpp/Column.h>
#include <SQLiteCpp/Statement.h>

#include <map>
#include <set>

namespace comera::store {

namespace {

void flatten(const nlohmann::json& value, const std::string& prefix,
             std::map<std::string, nlohmann::json>& out) {
  if (value.is_object() && !value.empty()) {
    for (const auto& [key, item] : value.items()) flatten(item, prefix + "." + key, out);
    return;
  }
  // Lists stay JSON text in one cell: mode and rank lists are read as a whole.
  out[prefix] = value.is_structured() ? nlohmann::json(value.dump()) : value;
}

}  // namespace

FlatTable export_table(ResultsDb& db, ExportGrain grain, const std::string& study) {
  using Row = std::map<std::string, nlohmann::json>;
  std::vector<Row> rows;
  std::set<std::string> config_keys, value_names;
  for (const auto& t : list_trials(db, study)) {
    Row common = {{"study", t.study},
                  {"trial_id", t.id},
                  {"number", t.number},
                  {"replica", t.replica},
                  {"state", to_string(t.state)},
                  {"seed", t.seed ? nlohmann::json(*t.seed) : nlohmann::json()}};
    flatten(t.config, "config", common);
    for (const auto& [key, value] : common)
      if (key.rfind("config.", 0) == 0) config_keys.insert(key);
    if (grain == ExportGrain::Trial) {
      Row row = common;
      auto text = [](const std::string& s) {
        return s.empty() ? nlohmann::json() : nlohmann::json(s);
      };
      const Row more = {{"config_hash", t.config_hash},     {"attempts", t.attempts},
                        {"started_at", text(t.started_at)}, {"ended_at", text(t.ended_at)},
                        {"error", text(t.error)},           {"worker", text(t.worker)}};
      row.insert(more.begin(), more.end());
      if (t.environment) {
        const nlohmann::json env = t.environment->to_json();
        for (const auto& [key, value] : env.items()) row[key] = value;
      }
      for (const auto& [name, value] : read_objectives(db.sql(), t.id)) {
        value_names.insert(name);
        row["objective." + name] = FlatTable::real(value);
      }
      rows.push_back(std::move(row));
      continue;
    }
    for (const auto& epoch : read_epochs(db.sql(), t.id)) {
      Row row = common;
      row["epoch"] = epoch.epoch;
      row["step"] = epoch.step;
      row["stage"] = epoch.stage;
      row["recorded_at"] = epoch.recorded_at;
      // The uid of the trial that computed it, for an early stage shared (no compute here).
      row["shared_from"] = epoch.shared_from.empty() ? nlohmann::json() : nlohmann::json(epoch.shared_from);
      for (const auto& [name, value] : epoch.metrics) {
        value_names.insert(name);
        row[name] = FlatTable::real(value);
      }
      rows.push_back(std::move(row));
    }
  }
  FlatTable table;
  table.columns = {"study", "trial_id", "number", "replica", "state", "seed"};
  if (grain == ExportGrain::Trial) {
    for (const char* c : {"config_hash", "attempts", "started_at", "ended_at", "worker", "host",
                          "device", "threads", "torch_version", "git_commit", "git_dirty"})
      table.columns.push_back(c);
    for (const auto& name : value_names) table.columns.push_back("objective." + name);
    table.columns.push_back("error");
  } else {
    for (const char* c : {"epoch", "step", "stage", "recorded_at", "shared_from"}) table.columns.push_back(c);
    for (const auto& name : ordered_metric_names(db.sql(), value_names))
      table.columns.push_back(name);
  }
  table.columns.insert(table.columns.end(), config_keys.begin(), config_keys.end());
  for (auto& row : rows) {
    std::vector<nlohmann::json> cells;
    for (const auto& column : table.columns) {
      auto it = row.find(column);
      cells.push_back(it == row.end() ? nlohmann::json() : it->second);
    }
    table.rows.push_back(std::move(cells));
  }
  return table;
}

}  // namespace comera::store
