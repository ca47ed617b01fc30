#pragma once
// Everything the HTML report shows about a results database, as one JSON document: per study,
// every trial (the rows of `runs list --json` with the sweep point, the config's difference
// from the study's base and the last epoch's metrics), the Pareto front as `pareto --all
// --format json` prints it, hypervolume against trials run, and the full record (`runs show
// --json`) of a bounded number of trials for curves and rank trajectories; then the tuner's
// kernel choices and the environments trials ran in.
#include "search/store/results_db.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace comera::report {

struct ReportOptions {
  std::vector<std::string> studies;  // empty: every study
  // Trials whose full record is embedded, per study: the front first, then the latest others.
  size_t max_detailed = 40;
  // Longer trials have their epochs (metrics and ranks) sampled evenly down to this many, the
  // first and last kept.
  size_t max_epochs = 100;
  // Hypervolume is computed after at most this many evenly spaced trial counts.
  size_t max_progress_points = 200;
  std::function<void(const std::string&)> on_progress;  // "study quickstart: 7 trials"
};

nlohmann::json report_data(store::ResultsDb& db, const ReportOptions& options);

// Which way a metric is better when the study does not say: "max" for accuracy, AUC,
// compression and throughput, "min" otherwise.
std::string preferred_direction(const std::string& metric);

}  // namespace comera::report
