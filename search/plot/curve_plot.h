#pragma once
// Per-epoch curves of training runs in one PNG drawn by gnuplot: a metric (e.g. eval_loss)
// against the epoch, one line per run, e.g. a tensorized pre-training run beside its dense twin.
#include "search/store/results_db.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace comera::plot {

struct Curve {
  std::string label;
  std::vector<std::pair<double, double>> points;  // (epoch, value); NaN values left out
  bool dashed = false;
  int color = 0;         // gnuplot line colour 1, 2, ...; 0: in order, two curves a colour (a run and its twin)
  bool markers = true;   // a marker at each point (off for densely sampled curves)
};

struct CurvePlot {
  std::string title, x_label = "epoch", y_label;
  std::string key = "top right";  // where the legend goes (gnuplot's words)
  std::vector<Curve> curves;
};

// The gnuplot program (data inline) that writes the plot to png_path.
std::string curve_script(const CurvePlot& plot, const std::string& png_path);
void write_curve_png(const CurvePlot& plot, const std::string& png_path);

// One run's curve of `metric` from the database's epochs (numbered as there, 0 first); a run
// that recorded no such metric gives an empty curve.
Curve trial_curve(store::ResultsDb& db, int64_t trial_id, const std::string& metric, const std::string& label);

// The newest trial, any state, whose experiment (config.experiment.name) is `name` (0 when there is none).
int64_t latest_trial_named(store::ResultsDb& db, const std::string& name);

}  // namespace comera::plot
