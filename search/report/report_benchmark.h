#pragma once
// How the report copes with a large study: a synthetic database (its study is named
// "synthetic", its numbers drawn from a seeded generator, not from training) of many trials with
// many epochs and layers, its report written, then opened in headless Chromium, timed.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string>

namespace comera::report {

struct ReportBenchOptions {
  int64_t trials = 10000, epochs = 200, layers = 4;
  size_t max_detailed = 40, max_epochs = 100;  // as `comera report` --max-curves, --max-epochs
  std::string folder;                          // where the database and page go (made, kept)
  uint64_t seed = 1;
  std::function<void(const std::string&)> on_progress;
};

struct ReportBenchResult {
  int64_t trials = 0, epochs = 0, layers = 0;
  double database_mb = 0, generate_s = 0;
  double report_s = 0;          // reading the database and writing the page
  double page_mb = 0;
  double browser_s = 0;         // the headless browser's whole run, start-up included
  double loaded_ms = 0;         // navigation start to the page drawn (the page's own clock)
  double script_ms = 0;         // the page's script alone: parsing the data, drawing
  nlohmann::json drawn;         // points per status on the front chart
  std::string browser, database, page;

  nlohmann::json to_json() const;
};

ReportBenchResult bench_report(const ReportBenchOptions& options);

}  // namespace comera::report
