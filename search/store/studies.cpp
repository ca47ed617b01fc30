#include "search/store/studies.h"

#include "core/util/comma_list.h"
#include "core/util/error.h"
#include "search/store/canonical_json.h"
#include "search/store/sql_now.h"

#include <SQLiteCpp/Column.h>
#include <SQLiteCpp/Statement.h>


namespace comera::store {

namespace {

Study read_study(SQLite::Statement& stmt) {
  return Study{stmt.getColumn(0).getInt64(), stmt.getColumn(1).getString(),
               nlohmann::json::parse(stmt.getColumn(2).getString()), stmt.getColumn(3).getString(),
               stmt.getColumn(4).getString()};
}

const char* kSelectStudy = "SELECT id, name, spec, objectives, created_at FROM studies";

}  // namespace

std::vector<Objective> parse_objectives(const std::string& text) {
  if (text.empty()) throw Error("no objectives given: use e.g. " + std::string(kDefaultObjectives));
  std::vector<Objective> out;
  for (const auto& item : split_list(text, "objectives")) {
    const auto colon = item.find(':');
    const std::string name = item.substr(0, colon);
    const std::string direction = colon == std::string::npos ? "" : item.substr(colon + 1);
    if (name.empty() || (direction != "min" && direction != "max"))
      throw Error("objective '" + item + "' in '" + text + "' must be name:min or name:max, e.g. " +
                  kDefaultObjectives);
    for (const auto& o : out)
      if (o.name == name) throw Error("objective '" + name + "' appears twice in '" + text + "'");
    out.push_back({name, direction == "min"});
  }
  return out;
}

Study create_or_get_study(ResultsDb& db, const std::string& name, const nlohmann::json& spec,
                          const std::string& objectives) {
  if (name.empty()) throw Error("a study needs a name");
  parse_objectives(objectives);
  const Study study = db.write([&] {
    SQLite::Statement insert(db.sql(),
                             "INSERT INTO studies (name, spec, objectives, created_at) VALUES "
                             "(?, ?, ?, " COMERA_SQL_NOW ") ON CONFLICT (name) DO NOTHING");
    insert.bind(1, name);
    insert.bind(2, canonical_json(spec));
    insert.bind(3, objectives);
    insert.exec();
    return *find_study(db, name);
  });
  if (study.objectives != objectives)
    throw Error("study '" + name + "' in " + db.path() + " has objectives '" + study.objectives +
                "', not '" + objectives + "': use another study name or the same objectives");
  return study;
}

bool replace_objectives(ResultsDb& db, const std::string& name, const std::string& objectives) {
  parse_objectives(objectives);
  return db.write([&] {
    SQLite::Statement update(
        db.sql(),
        "UPDATE studies SET objectives = ? WHERE name = ? AND NOT EXISTS (SELECT 1 FROM trials t "
        "WHERE t.study_id = studies.id AND t.state IN ('complete', 'running'))");
    update.bind(1, objectives);
    update.bind(2, name);
    return update.exec() == 1;
  });
}

std::optional<Study> find_study(ResultsDb& db, const std::string& name) {
  SQLite::Statement select(db.sql(), std::string(kSelectStudy) + " WHERE name = ?");
  select.bind(1, name);
  if (!select.executeStep()) return std::nullopt;
  return read_study(select);
}

Study require_study(ResultsDb& db, const std::string& name) {
  if (auto study = find_study(db, name)) return std::move(*study);
  std::string names;
  for (const auto& s : list_studies(db)) names += (names.empty() ? "" : ", ") + s.name;
  throw Error("no study '" + name + "' in " + db.path() + " (it has: " + (names.empty() ? "none" : names) + ")");
}

std::vector<Study> list_studies(ResultsDb& db) {
  SQLite::Statement select(db.sql(), std::string(kSelectStudy) + " ORDER BY id");
  std::vector<Study> out;
  while (select.executeStep()) out.push_back(read_study(select));
  return out;
}

}  // namespace comera::store
