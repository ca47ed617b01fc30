// `comera report`: one self-contained HTML page of a results database's studies (fronts, curves,
// rank trajectories, hypervolume progress, kernel choices, environments), to open offline.
#include "core/util/error.h"
#include "core/util/format.h"
#include "core/util/output_file.h"
#include "search/cli/command.h"
#include "search/cli/db_option.h"
#include "search/cli/report_output.h"

#include <chrono>
#include <iostream>

namespace comera::cli {
namespace {

int run(int argc, char** argv) {
  auto options = make_options("report",
                              "Write one HTML page (opens offline, from disk) showing a results database's "
                              "studies: Pareto fronts for any pair of objectives, per-epoch curves, rank "
                              "trajectories, hypervolume progress, kernel choices and environments");
  add_db_option(options);
  options.add_options()("o,output", "The HTML file to write (never the database or another input)",
                        cxxopts::value<std::string>())(
      "study", "Only these studies (a comma list, or repeat the flag; default: every study)",
      cxxopts::value<std::string>())("quiet", "No progress lines");
  add_report_limit_options(options);
  auto parsed = parse(options, argc, argv);
  if (!parsed) return 0;
  const auto& r = *parsed;
  if (!r.count("output")) throw Error("give the page to write: -o FILE.html");
  report::ReportOptions ro;
  read_report_limits(r, ro.max_detailed, ro.max_epochs);
  const std::string db = db_path(r);
  const OutputFile out(r["output"].as<std::string>(), "-o", {db});
  if (r.count("study")) ro.studies = string_list_flag(r, "study");
  if (!r.count("quiet")) ro.on_progress = [](const std::string& line) { std::cerr << line << std::endl; };
  const auto start = std::chrono::steady_clock::now();
  const size_t bytes = write_report(out, db, ro);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cerr << "wrote " << out.path() << " (" << format_count(static_cast<double>(bytes)) << " bytes, "
            << format_duration(seconds) << ")" << std::endl;
  return 0;
}

Register reg("report", "One self-contained HTML page of a database's studies (-o FILE.html)", run);

}  // namespace
}  // namespace comera::cli
