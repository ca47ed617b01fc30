#pragma once
// A two-objective Pareto plot drawn by gnuplot into a PNG: the front as an attainment staircase,
// the dominated trials as open circles, and published figures overlaid (a point where both
// values are known, a dashed line where only one is).
#include <string>
#include <vector>

namespace comera::pareto {

struct PlotPoint {
  double x = 0, y = 0;
  std::string label;  // drawn beside front points ("" for none)
};

struct FrontPlot {
  std::string title, x_label, y_label;
  bool x_minimised = true, y_minimised = true;
  std::vector<PlotPoint> front, dominated;
  // x or y NaN: the published figure gives only the other value.
  std::vector<PlotPoint> published;
};

// Throws comera::Error when the plot has no point with finite values for both objectives
// (nothing to draw), so a command can refuse before its other output.
void require_points(const FrontPlot& plot);

// The gnuplot program (data inline) that writes the plot to png_path. Axes whose positive values
// span more than two decades are logarithmic; non-finite points are left out.
std::string gnuplot_script(const FrontPlot& plot, const std::string& png_path);

// A gnuplot string in double quotes, backslashes and quotes escaped.
std::string gnuplot_quoted(const std::string& text);

// Runs a gnuplot program that writes png_path (its folder created first); throws comera::Error
// when gnuplot is missing or fails.
void run_gnuplot(const std::string& script, const std::string& png_path);

// Runs gnuplot (pngcairo terminal); throws comera::Error when gnuplot is missing or fails.
void write_png(const FrontPlot& plot, const std::string& png_path);

}  // namespace comera::pareto
