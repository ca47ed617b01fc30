#include "search/bench/methods_plot.h"

#include "search/pareto/front_plot.h"

#include <map>
#include <sstream>

namespace comera {

using pareto::gnuplot_quoted;

std::string methods_gnuplot_script(const std::vector<MethodPoint>& points, const std::string& title,
                                   const std::string& png_path) {
  std::map<std::string, std::vector<const MethodPoint*>> by_method;
  std::vector<std::string> order;
  for (const auto& p : points) {
    if (!by_method.count(p.method)) order.push_back(p.method);
    by_method[p.method].push_back(&p);
  }
  std::ostringstream s;
  s.precision(10);
  for (size_t i = 0; i < order.size(); ++i) {
    s << "$m" << i << " << EOD\n";
    for (const auto* p : by_method[order[i]]) s << p->batch << " " << p->step_ms << " " << p->memory_mb << "\n";
    s << "EOD\n";
  }
  s << "set terminal pngcairo size 1400,560 font \"sans,11\"\n"
    << "set output " << gnuplot_quoted(png_path) << "\n"
    << "set termoption noenhanced\n"
    << "set multiplot layout 1,2 title " << gnuplot_quoted(title) << "\n"
    << "set logscale x 2\nset logscale y\nset grid\nset key top left\n"
    << "set xlabel \"batch size\"\n";
  auto panel = [&](const char* label, int column) {
    s << "set ylabel " << gnuplot_quoted(label) << "\nplot ";
    for (size_t i = 0; i < order.size(); ++i)
      s << (i ? ", " : "") << "$m" << i << " using 1:" << column << " with linespoints lw 2 title "
        << gnuplot_quoted(order[i]);
    s << "\n";
  };
  panel("time per training step (ms)", 2);
  panel("peak memory (MB)", 3);
  s << "unset multiplot\n";
  return s.str();
}

void write_methods_png(const std::vector<MethodPoint>& points, const std::string& title,
                       const std::string& png_path) {
  pareto::run_gnuplot(methods_gnuplot_script(points, title, png_path), png_path);
}

}  // namespace comera
