#pragma once
// The paper's Figure 1 as a plot: time per training step and peak memory against batch size,
// one line per training method, two panels side by side, drawn by gnuplot into a PNG.
#include <string>
#include <vector>

namespace comera {

struct MethodPoint {
  std::string method;
  double batch = 0, step_ms = 0, memory_mb = 0;
};

// The gnuplot program (data inline) that writes the plot to png_path; `title` heads it.
std::string methods_gnuplot_script(const std::vector<MethodPoint>& points, const std::string& title,
                                   const std::string& png_path);

// Runs gnuplot; throws comera::Error when gnuplot is missing or fails.
void write_methods_png(const std::vector<MethodPoint>& points, const std::string& title,
                       const std::string& png_path);

}  // namespace comera
