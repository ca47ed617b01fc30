#pragma once
// The --db option every results-database command shares.
#include <cxxopts.hpp>

#include <string>

namespace comera::cli {

// Adds --db FILE (default results/comera.db).
void add_db_option(cxxopts::Options& options);
std::string db_path(const cxxopts::ParseResult& result);

}  // namespace comera::cli
