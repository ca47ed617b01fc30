#include "search/cli/report_output.h"

#include "core/util/error.h"
#include "search/report/report_page.h"
#include "search/store/results_db.h"

#include <filesystem>

namespace comera::cli {

void add_report_limit_options(cxxopts::Options& options) {
  options.add_options()(
      "max-curves", "Trials per study whose per-epoch record (curves, ranks) goes into the page: the front "
                    "first, then the latest",
      cxxopts::value<int64_t>()->default_value("40"))(
      "max-epochs", "Longer trials have their epochs sampled evenly down to this many (at least 2)",
      cxxopts::value<int64_t>()->default_value("100"));
}

void read_report_limits(const cxxopts::ParseResult& r, size_t& max_detailed, size_t& max_epochs) {
  const int64_t curves = r["max-curves"].as<int64_t>(), epochs = r["max-epochs"].as<int64_t>();
  if (curves < 0) throw Error("--max-curves " + std::to_string(curves) + " is negative: give 0 or more");
  if (epochs < 2) throw Error("--max-epochs " + std::to_string(epochs) + " is below 2: give 2 or more");
  max_detailed = static_cast<size_t>(curves);
  max_epochs = static_cast<size_t>(epochs);
}

size_t write_report(const OutputFile& out, const std::string& db_path, const report::ReportOptions& options) {
  auto db = store::ResultsDb::open(db_path, store::ResultsDb::Mode::ReadOnly);
  const std::string page = report::report_html(report::report_data(db, options),
                                               "comera report: " + std::filesystem::path(db_path).filename().string());
  out.write_text([&page](std::ostream& stream) { stream << page; });
  return page.size();
}

}  // namespace comera::cli
