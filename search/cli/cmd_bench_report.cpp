// `comera bench report`: a synthetic study of many trials (10,000 x 200 epochs by default) made,
// reported and opened in headless Chromium: how long the page takes to draw and how big it is.
#include "core/util/format.h"
#include "search/cli/command.h"
#include "search/cli/report_output.h"
#include "search/environment.h"
#include "search/report/report_benchmark.h"

#include <iostream>

namespace comera::cli {
namespace {

int run(int argc, char** argv) {
  auto options = make_options("bench report",
                              "Time the HTML report on a large synthetic study (numbers drawn from a seeded "
                              "generator, not training): making the database, writing the page, and the page "
                              "drawn in headless Chromium");
  options.add_options()("trials", "Trials in the study", cxxopts::value<int64_t>()->default_value("10000"))(
      "epochs", "Epochs of each complete trial", cxxopts::value<int64_t>()->default_value("200"))(
      "layers", "Tensorized layers whose ranks each epoch records", cxxopts::value<int64_t>()->default_value("4"))(
      "folder", "Where the database and the page go (the database is made afresh: the folder must not hold one yet)",
      cxxopts::value<std::string>()->default_value("results/bench_report"))("json", "Machine-readable output");
  add_report_limit_options(options);
  auto parsed = parse(options, argc, argv);
  if (!parsed) return 0;
  const auto& r = *parsed;
  report::ReportBenchOptions o;
  o.trials = r["trials"].as<int64_t>();
  o.epochs = r["epochs"].as<int64_t>();
  o.layers = r["layers"].as<int64_t>();
  o.folder = r["folder"].as<std::string>();
  read_report_limits(r, o.max_detailed, o.max_epochs);
  o.on_progress = [](const std::string& line) { std::cerr << line << std::endl; };
  const auto result = report::bench_report(o);
  if (r.count("json")) {
    auto out = result.to_json();
    out["environment"] = current_environment().to_json();
    std::cout << out.dump(2) << std::endl;
    return 0;
  }
  std::cout << "synthetic study: " << result.trials << " trials x " << result.epochs << " epochs, " << result.layers
            << " layers; database " << fixed_text(result.database_mb, 1) << " MB, made in "
            << format_duration(result.generate_s) << "\n"
            << "report: written in " << format_duration(result.report_s) << ", page "
            << fixed_text(result.page_mb, 2) << " MB\n"
            << "browser (" << result.browser << "): drawn " << fixed_text(result.loaded_ms, 0)
            << " ms after navigation (script " << fixed_text(result.script_ms, 0) << " ms); whole run "
            << format_duration(result.browser_s) << "\n"
            << "points drawn: " << result.drawn.dump() << "\n"
            << "measured on " << current_environment().describe() << "\n";
  return 0;
}

Register reg("bench report", "The HTML report on a large synthetic study: page size and time to draw", run);

}  // namespace
}  // namespace comera::cli
