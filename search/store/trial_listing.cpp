#include "search/store/trial_listing.h"

#include "search/store/decisions.h"
#include "search/store/layer_ranks.h"
#include "search/store/trial_outcome.h"

#include <SQLiteCpp/Statement.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace comera::store {

nlohmann::json objectives_json(const ObjectiveValues& values) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, value] : values) out[name] = FlatTable::real(value);
  return out;
}

double heartbeat_age_s(ResultsDb& db, const Trial& t) {
  if (t.state != TrialState::Running || t.heartbeat_at.empty()) return NAN;
  SQLite::Statement q(db.sql(), "SELECT (julianday('now') - julianday(?)) * 86400");
  q.bind(1, t.heartbeat_at);
  q.executeStep();
  return q.getColumn(0).getDouble();
}

nlohmann::json trial_row_json(ResultsDb& db, const Trial& t) {
  const double age = heartbeat_age_s(db, t);
  const auto outcome = trial_outcome(db, t);
  const bool late = std::isfinite(outcome.size_vs_target);
  return {{"id", t.id},
          {"study", t.study},
          {"number", t.number},
          {"replica", t.replica},
          {"kind", outcome.kind},
          {"target", late ? nlohmann::json{{"loss", outcome.loss_target},
                                           {"size_ratio", FlatTable::real(outcome.size_ratio)},
                                           {"size", outcome.size_target}}
                          : nlohmann::json()},
          {"size_vs_target", late ? nlohmann::json(outcome.size_vs_target) : nlohmann::json()},
          {"loss_vs_target", late ? FlatTable::real(outcome.loss_vs_target) : nlohmann::json()},
          {"lost_layers", outcome.lost_layers},
          {"state", to_string(t.state)},
          {"seed", t.seed ? nlohmann::json(*t.seed) : nlohmann::json()},
          {"epochs", outcome.epochs},
          {"objectives", objectives_json(read_objectives(db.sql(), t.id))},
          {"config_hash", t.config_hash},
          {"started_at", t.started_at},
          {"ended_at", t.ended_at},
          {"worker", t.worker},
          {"heartbeat_age_s", std::isnan(age) ? nlohmann::json() : nlohmann::json(age)}};
}

FlatTable epoch_table(ResultsDb& db, const std::vector<EpochRecord>& epochs) {
  std::set<std::string> seen;
  for (const auto& e : epochs)
    for (const auto& [name, value] : e.metrics) seen.insert(name);
  const auto names = ordered_metric_names(db.sql(), seen);
  const bool shared = std::any_of(epochs.begin(), epochs.end(), [](const EpochRecord& e) { return !e.shared_from.empty(); });
  // The trial that computed a shared epoch, by its number in the study (its uid if gone).
  auto computed_by = [&](const std::string& uid) -> nlohmann::json {
    if (uid.empty()) return nullptr;
    SQLite::Statement q(db.sql(), "SELECT number FROM trials WHERE uid = ?");
    q.bind(1, uid);
    return q.executeStep() ? "trial " + std::to_string(q.getColumn(0).getInt64()) : uid;
  };
  FlatTable table;
  table.columns = {"epoch", "step", "stage"};
  if (shared) table.columns.push_back("shared_from");
  table.columns.insert(table.columns.end(), names.begin(), names.end());
  for (const auto& e : epochs) {
    std::vector<nlohmann::json> row = {e.epoch, e.step, e.stage};
    if (shared) row.push_back(computed_by(e.shared_from));
    for (const auto& name : names) {
      auto it = e.metrics.find(name);
      row.push_back(it == e.metrics.end() ? nlohmann::json() : FlatTable::real(it->second));
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

nlohmann::json trial_detail_json(ResultsDb& db, const Trial& trial) {
  nlohmann::json out = to_json(trial);
  out["objectives"] = objectives_json(read_objectives(db.sql(), trial.id));
  out["epochs"] = to_json(epoch_table(db, read_epochs(db.sql(), trial.id)));
  out["decisions"] = nlohmann::json::array();
  for (const auto& d : read_decisions(db.sql(), trial.id)) out["decisions"].push_back(to_json(d));
  out["ranks"] = nlohmann::json::object();
  for (const auto& [epoch, layers] : read_layer_ranks(db.sql(), trial.id))
    for (const auto& layer : layers)
      out["ranks"][std::to_string(epoch)].push_back(
          {{"layer", layer.layer}, {"ranks", layer.ranks}, {"size", layer.size}});
  return out;
}

}  // namespace comera::store
