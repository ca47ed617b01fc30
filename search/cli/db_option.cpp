#include "search/cli/db_option.h"

#include "search/store/results_db.h"

namespace comera::cli {

void add_db_option(cxxopts::Options& options) {
  options.add_options()("db", "Results database file",
                        cxxopts::value<std::string>()->default_value(store::kDefaultDbPath));
}

std::string db_path(const cxxopts::ParseResult& result) { return result["db"].as<std::string>(); }

}  // namespace comera::cli
