// `comera query`: one read-only SQL statement on the results database.
#include "core/util/error.h"
#include "search/cli/command.h"
#include "search/cli/db_option.h"
#include "search/store/query.h"

#include <iostream>

namespace comera::cli {
namespace {

int run(int argc, char** argv) {
  auto options = make_options(
      "query",
      "Run one read-only SQL statement on the results database. Tables: studies, trials, "
      "epochs, epoch_metrics, objectives, layer_ranks, kernel_choices, decisions, checks, schema_version; views: "
      "trial_table, epoch_table");
  add_db_option(options);
  options.add_options()("sql", "The statement, e.g. \"SELECT * FROM trial_table\"",
                        cxxopts::value<std::string>())("json", "Machine-readable output");
  options.parse_positional({"sql"});
  options.positional_help("\"SELECT ...\"");
  auto parsed = parse(options, argc, argv);
  if (!parsed) return 0;
  if (!parsed->count("sql"))
    throw Error("give a statement, e.g. comera query \"SELECT * FROM trial_table\"");
  auto db = store::ResultsDb::open(db_path(*parsed), store::ResultsDb::Mode::ReadOnly);
  const auto table = store::read_only_query(db, (*parsed)["sql"].as<std::string>());
  if (parsed->count("json"))
    std::cout << store::to_json(table).dump(2) << std::endl;
  else
    store::write_text(std::cout, table);
  return 0;
}

Register reg("query", "Run a read-only SQL query on the results database", run);

}  // namespace
}  // namespace comera::cli
