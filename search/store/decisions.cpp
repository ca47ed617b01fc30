#include "search/store/decisions.h"

#include "core/util/error.h"
#include "search/store/canonical_json.h"
#include "search/store/sql_now.h"

#include <SQLiteCpp/Column.h>
#include <SQLiteCpp/Statement.h>

#include <array>

namespace comera::store {

namespace {

const std::array<const char*, 3> kKindNames = {"proposed", "pruned", "resumed"};

DecisionKind parse_kind(const std::string& text) {
  for (size_t i = 0; i < kKindNames.size(); ++i)
    if (text == kKindNames[i]) return static_cast<DecisionKind>(i);
  throw Error("'" + text + "' is not a decision kind (proposed, pruned, resumed): the database was "
              "written by a newer comera");
}

}  // namespace

std::string to_string(DecisionKind kind) { return kKindNames[static_cast<size_t>(kind)]; }

void write_decision(SQLite::Database& db, int64_t trial_id, const Decision& d) {
  SQLite::Statement insert(db, "INSERT INTO decisions (trial_id, kind, epoch, detail, recorded_at) "
                               "VALUES (?, ?, ?, ?, COALESCE(NULLIF(?, ''), " COMERA_SQL_NOW "))");
  insert.bind(1, trial_id);
  insert.bind(2, to_string(d.kind));
  if (d.epoch) insert.bind(3, *d.epoch);
  insert.bind(4, canonical_json(d.detail));
  insert.bind(5, d.recorded_at);
  insert.exec();
}

void record_decision(ResultsDb& db, int64_t trial_id, const Decision& decision) {
  db.write([&] { write_decision(db.sql(), trial_id, decision); });
}

std::vector<Decision> read_decisions(SQLite::Database& db, int64_t trial_id) {
  SQLite::Statement q(db, "SELECT kind, epoch, detail, recorded_at FROM decisions WHERE trial_id = ? "
                          "ORDER BY id");
  q.bind(1, trial_id);
  std::vector<Decision> out;
  while (q.executeStep()) {
    Decision d;
    d.kind = parse_kind(q.getColumn(0).getString());
    if (!q.isColumnNull(1)) d.epoch = q.getColumn(1).getInt64();
    d.detail = nlohmann::json::parse(q.getColumn(2).getString());
    d.recorded_at = q.getColumn(3).getString();
    out.push_back(std::move(d));
  }
  return out;
}

std::string describe(const Decision& d) {
  std::string text = to_string(d.kind);
  if (d.epoch) text += " at epoch " + std::to_string(*d.epoch);
  const auto reason = d.detail.value("reason", std::string());
  return reason.empty() ? text : text + ": " + reason;
}

nlohmann::json to_json(const Decision& d) {
  nlohmann::json j = {{"kind", to_string(d.kind)}, {"detail", d.detail}, {"recorded_at", d.recorded_at}};
  j["epoch"] = d.epoch ? nlohmann::json(*d.epoch) : nlohmann::json();
  return j;
}

}  // namespace comera::store
