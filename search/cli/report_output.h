#pragma once
// Writes the HTML report of a results database (search/report): for `comera report` and for
// `comera sweep --report`.
#include "core/util/output_file.h"
#include "search/report/report_data.h"

#include <string>

namespace comera::cli {

// Reads `db_path` read-only, builds the page and writes it to `out`, whole or not at all;
// returns the page's size in bytes.
size_t write_report(const OutputFile& out, const std::string& db_path, const report::ReportOptions& options);

}  // namespace comera::cli
