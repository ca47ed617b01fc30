#pragma once
// Writes the HTML report of a results database (search/report): for `comera report` and for
// `comera sweep --report`.
#include "core/util/output_file.h"
#include "search/report/report_data.h"

#include <cxxopts.hpp>

#include <string>

namespace comera::cli {

// --max-curves and --max-epochs, which bound what a page embeds (`report`, `bench report`).
void add_report_limit_options(cxxopts::Options& options);
// Their values, checked (errors name the flag and the fix).
void read_report_limits(const cxxopts::ParseResult& result, size_t& max_detailed, size_t& max_epochs);

// Reads `db_path` read-only, builds the page and writes it to `out`, whole or not at all;
// returns the page's size in bytes.
size_t write_report(const OutputFile& out, const std::string& db_path, const report::ReportOptions& options);

}  // namespace comera::cli
