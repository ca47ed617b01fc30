#include "search/pareto/front_plot.h"

#include "core/util/error.h"
#include "core/util/process.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <sstream>

namespace comera::pareto {

std::string gnuplot_quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

namespace {

bool finite(const PlotPoint& p) { return std::isfinite(p.x) && std::isfinite(p.y); }

struct Range {
  double lo = INFINITY, hi = -INFINITY;
  bool log = false;
};

// The values drawn on one axis, published one-value figures included (gnuplot's autoscale
// would leave their lines off the plot); logarithmic when positive and spanning over 20x (a dense
// baseline beside compressed models).
Range axis_range(const FrontPlot& plot, bool x_axis) {
  Range r;
  auto add = [&](double v) { r.lo = std::min(r.lo, v), r.hi = std::max(r.hi, v); };
  for (const auto* set : {&plot.front, &plot.dominated})
    for (const auto& p : *set)
      if (finite(p)) add(x_axis ? p.x : p.y);
  for (const auto& p : plot.published)
    if (std::isfinite(x_axis ? p.x : p.y)) add(x_axis ? p.x : p.y);
  if (r.lo > r.hi) return r;
  r.log = r.lo > 0 && r.hi / r.lo > 20;
  if (r.log) {
    r.lo /= 1.4, r.hi *= 1.4;
  } else {
    const double pad = r.hi > r.lo ? 0.08 * (r.hi - r.lo) : std::max(0.05 * std::abs(r.hi), 0.5);
    r.lo -= pad, r.hi += pad;
  }
  return r;
}

void set_axis(std::ostream& out, const Range& r, const char* axis) {
  if (r.lo > r.hi) return;
  if (r.log) out << "set logscale " << axis << "\n";
  out << "set " << axis << "range [" << r.lo << ":" << r.hi << "]\n";
}

void datablock(std::ostream& out, const std::string& name, const std::vector<PlotPoint>& points) {
  out << "$" << name << " << EOD\n";
  for (const auto& p : points)
    if (finite(p)) out << p.x << " " << p.y << " " << gnuplot_quoted(p.label) << "\n";
  out << "EOD\n";
}

}  // namespace

void require_points(const FrontPlot& plot) {
  for (const auto* points : {&plot.front, &plot.dominated, &plot.published})
    if (std::any_of(points->begin(), points->end(), finite)) return;
  throw Error("Pareto plot: no trial has finite values for both objectives");
}

std::string gnuplot_script(const FrontPlot& plot, const std::string& png_path) {
  require_points(plot);
  std::ostringstream s;
  s << std::setprecision(10);
  s << "set terminal pngcairo size 1100,760 enhanced font 'Sans,11'\n"
    << "set output " << gnuplot_quoted(png_path) << "\n"
    << "set title " << gnuplot_quoted(plot.title) << " noenhanced\n"
    << "set xlabel " << gnuplot_quoted(plot.x_label + (plot.x_minimised ? " (lower is better)"
                                                               : " (higher is better)"))
    << " noenhanced\n"
    << "set ylabel " << gnuplot_quoted(plot.y_label + (plot.y_minimised ? " (lower is better)"
                                                               : " (higher is better)"))
    << " noenhanced\n"
    << "set grid lc rgb '#dddddd'\nset key outside bottom center horizontal\n";
  set_axis(s, axis_range(plot, true), "x");
  set_axis(s, axis_range(plot, false), "y");

  // The staircase runs from the best x to the worst: each step goes across, then up or down.
  std::vector<PlotPoint> stairs;
  std::copy_if(plot.front.begin(), plot.front.end(), std::back_inserter(stairs), finite);
  std::sort(stairs.begin(), stairs.end(), [&](const PlotPoint& a, const PlotPoint& b) {
    if (a.x != b.x) return plot.x_minimised ? a.x < b.x : a.x > b.x;
    return plot.y_minimised ? a.y < b.y : a.y > b.y;
  });
  datablock(s, "front", stairs);
  datablock(s, "dominated", plot.dominated);
  std::vector<PlotPoint> published_points;
  std::copy_if(plot.published.begin(), plot.published.end(),
               std::back_inserter(published_points), finite);
  datablock(s, "published", published_points);

  // Published figures with one known value: a dashed line across the plot at that value.
  int tag = 1;
  for (const auto& p : plot.published) {
    if (std::isfinite(p.x) == std::isfinite(p.y)) continue;
    const bool vertical = std::isfinite(p.x);
    const double v = vertical ? p.x : p.y;
    s << "set arrow " << tag << (vertical ? " from first " : " from graph 0, first ") << v
      << (vertical ? ", graph 0 to first " : " to graph 1, first ") << v
      << (vertical ? ", graph 1" : "") << " nohead dt 2 lw 1.5 lc rgb '#c0392b'\n";
    s << "set label " << tag << " " << gnuplot_quoted(p.label)
      << (vertical ? " at first " : " at graph 0.01, first ") << v
      << (vertical ? ", graph 0.97 rotate by 90 right offset -0.8,0" : " offset 0,0.7")
      << " textcolor rgb '#c0392b' font 'Sans,9' noenhanced\n";
    ++tag;
  }

  const bool any_front = !stairs.empty(), any_dominated = std::any_of(
      plot.dominated.begin(), plot.dominated.end(), finite);
  std::vector<std::string> layers;
  if (any_dominated)
    layers.push_back("$dominated using 1:2 with points pt 6 ps 1.3 lc rgb '#8a8a8a' "
                     "title 'dominated trials'");
  if (any_front) {
    layers.push_back("$front using 1:2 with steps lw 2 lc rgb '#1f5fa8' title 'Pareto front'");
    layers.push_back("$front using 1:2 with points pt 7 ps 1.5 lc rgb '#1f5fa8' notitle");
    layers.push_back("$front using 1:2:3 with labels offset 1.2,0.8 left font 'Sans,9' "
                     "noenhanced notitle");
  }
  if (!published_points.empty()) {
    layers.push_back("$published using 1:2 with points pt 9 ps 1.8 lc rgb '#c0392b' "
                     "title 'published'");
    layers.push_back("$published using 1:2:3 with labels offset 1.2,-0.8 left "
                     "textcolor rgb '#c0392b' font 'Sans,9' noenhanced notitle");
  }
  s << "plot ";
  for (size_t i = 0; i < layers.size(); ++i) s << (i ? ", \\\n     " : "") << layers[i];
  s << "\n";
  return s.str();
}

void run_gnuplot(const std::string& script, const std::string& png_path) {
  const auto parent = std::filesystem::path(png_path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  run_lines({"gnuplot"}, script, [](const std::string&) {},
            "gnuplot drawing " + png_path + " (install it with scripts/setup.sh)");
}

void write_png(const FrontPlot& plot, const std::string& png_path) {
  run_gnuplot(gnuplot_script(plot, png_path), png_path);
}

}  // namespace comera::pareto
