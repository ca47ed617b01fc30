#include "search/cli/report_output.h"

#include "search/report/report_page.h"
#include "search/store/results_db.h"

#include <filesystem>

namespace comera::cli {

size_t write_report(const OutputFile& out, const std::string& db_path, const report::ReportOptions& options) {
  auto db = store::ResultsDb::open(db_path, store::ResultsDb::Mode::ReadOnly);
  const std::string page = report::report_html(report::report_data(db, options),
                                               "comera report: " + std::filesystem::path(db_path).filename().string());
  out.write_text([&page](std::ostream& stream) { stream << page; });
  return page.size();
}

}  // namespace comera::cli
