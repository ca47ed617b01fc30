#include "search/plot/curve_plot.h"

#include "search/pareto/front_plot.h"
#include "search/store/epoch_metrics.h"

#include <SQLiteCpp/SQLiteCpp.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <iomanip>
#include <sstream>

namespace comera::plot {

std::string curve_script(const CurvePlot& plot, const std::string& png_path) {
  std::ostringstream s;
  s << std::setprecision(10);
  s << "set terminal pngcairo size 1100,700 enhanced font 'Sans,11'\n"
    << "set output " << pareto::gnuplot_quoted(png_path) << "\n"
    << "set title " << pareto::gnuplot_quoted(plot.title) << " noenhanced\n"
    << "set xlabel " << pareto::gnuplot_quoted(plot.x_label) << " noenhanced\n"
    << "set ylabel " << pareto::gnuplot_quoted(plot.y_label) << " noenhanced\n"
    << "set key " << plot.key << " noenhanced\nset grid\n";
  std::vector<std::string> layers;
  for (size_t i = 0; i < plot.curves.size(); ++i) {
    const auto& c = plot.curves[i];
    s << "$c" << i << " << EOD\n";
    for (const auto& [x, y] : c.points)
      if (std::isfinite(x) && std::isfinite(y)) s << x << " " << y << "\n";
    s << "EOD\n";
    layers.push_back("$c" + std::to_string(i) + " using 1:2 with " + (c.markers ? "linespoints pt 7 ps 0.8" : "lines") +
                     " lw 2 dt " + (c.dashed ? "2" : "1") + " lc " +
                     std::to_string(c.color > 0 ? c.color : static_cast<int>(i / 2 + 1)) + " title " +
                     pareto::gnuplot_quoted(c.label));
  }
  s << "plot ";
  for (size_t i = 0; i < layers.size(); ++i) s << (i ? ", \\\n     " : "") << layers[i];
  s << "\n";
  return s.str();
}

void write_curve_png(const CurvePlot& plot, const std::string& png_path) {
  pareto::run_gnuplot(curve_script(plot, png_path), png_path);
}

Curve trial_curve(store::ResultsDb& db, int64_t trial_id, const std::string& metric, const std::string& label) {
  Curve c;
  c.label = label;
  for (const auto& e : store::read_epochs(db.sql(), trial_id)) {
    const auto it = e.metrics.find(metric);
    if (it != e.metrics.end() && std::isfinite(it->second))
      c.points.emplace_back(static_cast<double>(e.epoch), it->second);
  }
  return c;
}

int64_t latest_trial_named(store::ResultsDb& db, const std::string& name) {
  SQLite::Statement q(db.sql(), "SELECT id, config FROM trials ORDER BY id DESC");
  while (q.executeStep()) {
    const auto config = nlohmann::json::parse(q.getColumn(1).getString(), nullptr, false);
    // Trials store {"kind", "point", "seed", "experiment"}: the name is the experiment's.
    const auto experiment = config.is_object() ? config.value("experiment", nlohmann::json()) : nlohmann::json();
    if (experiment.is_object() && experiment.value("name", std::string()) == name) return q.getColumn(0).getInt64();
  }
  return 0;
}

}  // namespace comera::plot
