// `comera db upgrade` and `comera db info`: the results database's schema and contents.
#include "search/cli/command.h"
#include "search/cli/db_option.h"
#include "search/store/results_db.h"
#include "search/store/schema.h"

#include <SQLiteCpp/Column.h>
#include <SQLiteCpp/Statement.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <iostream>

namespace comera::cli {
namespace {

int upgrade(int argc, char** argv) {
  auto options = make_options("db upgrade",
                              "Migrate a results database forward to this comera's schema "
                              "version (each step in its own transaction)");
  add_db_option(options);
  auto parsed = parse(options, argc, argv);
  if (!parsed) return 0;
  const std::string path = db_path(*parsed);
  const int steps = store::ResultsDb::upgrade(path);
  std::cout << path << ": "
            << (steps ? "applied " + std::to_string(steps) + " migration step(s); "
                      : "already current; ")
            << "schema version " << store::latest_schema_version() << "\n";
  return 0;
}

int info(int argc, char** argv) {
  auto options = make_options("db info", "Schema version and row counts of a results database");
  add_db_option(options);
  options.add_options()("json", "Machine-readable output");
  auto parsed = parse(options, argc, argv);
  if (!parsed) return 0;
  auto db = store::ResultsDb::open(db_path(*parsed), store::ResultsDb::Mode::ReadOnly);
  nlohmann::json out = {{"path", db.path()},
                        {"bytes", std::filesystem::file_size(db.path())},
                        {"schema_version", store::schema_version(db.sql())},
                        {"journal_mode", db.sql().execAndGet("PRAGMA journal_mode").getString()}};
  // Every data table the file has (its schema version's: decisions from 3, checks from 4).
  SQLite::Statement tables(db.sql(), "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE "
                                     "'sqlite\\_%' ESCAPE '\\' AND name != 'schema_version' ORDER BY name");
  while (tables.executeStep()) {
    const std::string table = tables.getColumn(0).getString();
    out["rows"][table] = db.sql().execAndGet("SELECT COUNT(*) FROM \"" + table + "\"").getInt64();
  }
  SQLite::Statement states(db.sql(),
                           "SELECT s.name, t.state, COUNT(t.id) FROM studies s LEFT JOIN trials t "
                           "ON t.study_id = s.id GROUP BY s.id, t.state ORDER BY s.id, t.state");
  out["studies"] = nlohmann::json::object();
  while (states.executeStep()) {
    auto& study = out["studies"][states.getColumn(0).getString()];
    if (study.is_null()) study = nlohmann::json::object();
    if (!states.isColumnNull(1))
      study[states.getColumn(1).getString()] = states.getColumn(2).getInt64();
  }
  if (parsed->count("json")) {
    std::cout << out.dump(2) << std::endl;
    return 0;
  }
  std::cout << out["path"].get<std::string>() << ": schema version " << out["schema_version"]
            << ", " << out["bytes"] << " bytes, journal " << out["journal_mode"].get<std::string>()
            << "\n";
  for (const auto& [table, count] : out["rows"].items())
    std::cout << "  " << table << ": " << count << "\n";
  for (const auto& [study, counts] : out["studies"].items()) {
    std::cout << "  study " << study << ":";
    for (const auto& [state, count] : counts.items()) std::cout << " " << state << " " << count;
    std::cout << "\n";
  }
  return 0;
}

Register reg_upgrade("db upgrade", "Migrate a results database to this build's schema", upgrade);
Register reg_info("db info", "Schema version and counts of a results database", info);

}  // namespace
}  // namespace comera::cli
