// `comera bench fronts-plot TASK=FRONTS.json...`: several tasks' `bench fronts --json` results
// in one plot. Each task has its own reference point and scale, so both axes are relative to
// its target method (the hand grid): compute as a fraction of the grid's trial-epochs,
// hypervolume as a fraction of the grid's final one. Per task and method, the mean over its runs
// of the hypervolume each had reached at that compute; the target (the grid's
// hypervolume at half its compute) is the point (0.5, 1).
#include "core/util/error.h"
#include "core/util/output_file.h"
#include "search/cli/command.h"
#include "search/pareto/front_trace.h"
#include "search/plot/curve_plot.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>

namespace comera::cli {
namespace {

constexpr double kStep = 0.01;  // the curves' resolution, in fractions of the grid's compute

struct Task {
  std::string name, file;
  double target_hv = 0, grid_epochs = 0;
  nlohmann::json groups;
};

std::vector<pareto::TraceStep> steps_of(const nlohmann::json& run) {
  std::vector<pareto::TraceStep> steps;
  for (const auto& s : run.at("steps"))
    steps.push_back({s.at("trial").get<int64_t>(), s.at("state").get<std::string>(), s.at("epochs").get<double>(),
                     s.at("minutes").get<double>(), s.at("hypervolume").get<double>()});
  return steps;
}

Task read_task(const std::string& arg) {
  const auto eq = arg.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == arg.size())
    throw Error("'" + arg + "': give TASK=FRONTS.json (the output of comera bench fronts --json), e.g. dlrm=dlrm.json");
  Task t;
  t.name = arg.substr(0, eq), t.file = arg.substr(eq + 1);
  std::ifstream in(t.file);
  if (!in) throw Error(t.file + ": cannot read it (write it with comera bench fronts DB... --ref ... --json > " + t.file + ")");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw Error(t.file + ": not JSON (" + e.what() + "); write it with comera bench fronts ... --json");
  }
  if (!j.is_object() || !j.contains("target") || !j.contains("groups"))
    throw Error(t.file + ": no target method's hypervolume (run comera bench fronts with the grid's database, grid.db, "
                         "or --target METHOD)");
  std::string method;
  // Every value read here, before any work: a file of another shape is named with its fix.
  try {
    t.target_hv = j.at("target").at("hypervolume").get<double>();
    method = j.at("target").at("method").get<std::string>();
    for (const auto& g : j.at("groups")) {
      if (g.at("method") == method) t.grid_epochs = g.at("epochs").get<double>();
      (void)g.at("method").get<std::string>();
      for (const auto& run : g.at("runs")) (void)steps_of(run);
    }
  } catch (const nlohmann::json::exception& e) {
    throw Error(t.file + ": not what comera bench fronts --json writes (" + e.what() +
                "); write it again with comera bench fronts DB... --json > " + t.file);
  }
  if (!(t.target_hv > 0) || !(t.grid_epochs > 0))
    throw Error(t.file + ": the target method '" + method + "' has no hypervolume or no compute to compare with");
  t.groups = j["groups"];
  return t;
}

int run(int argc, char** argv) {
  auto options = make_options(
      "bench fronts-plot",
      "Several tasks' hypervolume-against-compute results (comera bench fronts --json) in one plot, each\n"
      "relative to its hand grid: compute as a fraction of the grid's trial-epochs, hypervolume as a\n"
      "fraction of the grid's final one; per method the mean over its runs. The target of half the\n"
      "grid's compute for its hypervolume is the point (0.5, 1).");
  options.add_options()("tasks", "TASK=FRONTS.json, one per task", cxxopts::value<std::vector<std::string>>())(
      "plot", "Write the plot to this PNG", cxxopts::value<std::string>()->default_value(""))(
      "json", "Machine-readable output");
  options.parse_positional({"tasks"});
  options.positional_help("TASK=FRONTS.json...");
  auto parsed = parse(options, argc, argv);
  if (!parsed) return 0;
  const auto& r = *parsed;
  if (!r.count("tasks"))
    throw Error("give TASK=FRONTS.json for each task, e.g. comera bench fronts-plot quickstart=q.json dlrm=d.json --plot both.png");
  std::vector<Task> tasks;
  std::vector<std::string> reads;
  for (const auto& arg : r["tasks"].as<std::vector<std::string>>()) {
    tasks.push_back(read_task(arg));
    reads.push_back(tasks.back().file);
  }
  std::optional<OutputFile> png;
  if (!r["plot"].as<std::string>().empty()) png.emplace(r["plot"].as<std::string>(), "--plot", reads);

  nlohmann::json out = nlohmann::json::array();
  plot::CurvePlot p;
  p.title = "hypervolume against compute, relative to each task's hand grid (solid: the first task, dashed: the others)";
  p.x_label = "trial-epochs spent / the grid's";
  p.y_label = "hypervolume / the grid's final";
  p.key = "bottom right";
  std::vector<std::string> methods;
  for (const auto& t : tasks) {
    for (const auto& g : t.groups) {
      std::vector<std::vector<pareto::TraceStep>> runs;
      double last = 0;
      for (const auto& run : g["runs"]) {
        runs.push_back(steps_of(run));
        if (!runs.back().empty()) last = std::max(last, static_cast<double>(runs.back().back().epochs));
      }
      plot::Curve c;
      c.label = t.name + " " + g["method"].get<std::string>();
      // A colour per method, a dash pattern per task.
      const auto method = g["method"].get<std::string>();
      if (std::find(methods.begin(), methods.end(), method) == methods.end()) methods.push_back(method);
      c.color = static_cast<int>(std::find(methods.begin(), methods.end(), method) - methods.begin()) + 1;
      c.dashed = &t != &tasks.front();
      c.markers = false;
      nlohmann::json reach;
      const auto n = static_cast<int64_t>(std::ceil(last / t.grid_epochs / kStep));
      for (int64_t i = 0; i <= n; ++i) {
        const double x = static_cast<double>(i) * kStep;
        double mean = 0;
        for (const auto& steps : runs) mean += pareto::hypervolume_at(steps, x * t.grid_epochs * (1 + 1e-12)) / t.target_hv;
        mean /= static_cast<double>(runs.size());
        c.points.push_back({x, mean});
        if (reach.is_null() && mean >= 1 - 1e-12) reach = x;
      }
      nlohmann::json fractions = nlohmann::json::array();
      for (const auto& run : g["runs"])
        fractions.push_back(run.contains("reaches_target") && run["reaches_target"].is_object()
                                ? nlohmann::json(run["reaches_target"]["epochs"].get<double>() / t.grid_epochs)
                                : nlohmann::json());
      out.push_back({{"task", t.name},
                     {"method", g["method"]},
                     {"runs", g["runs"].size()},
                     {"final", g["hypervolume"]["mean"].get<double>() / t.target_hv},
                     {"mean_reaches_grid_at", reach},
                     {"runs_reach_grid_at", fractions},
                     {"curve", c.points}});
      p.curves.push_back(std::move(c));
    }
  }
  plot::Curve target{"target: the grid's hypervolume at half its compute", {{0, 1}, {0.5, 1}, {0.5, 0}}, true};
  target.color = static_cast<int>(methods.size()) + 1;
  target.markers = false;
  p.curves.push_back(target);
  if (png) png->write([&](const std::string& file) { plot::write_curve_png(p, file); });
  if (r.count("json")) {
    std::cout << out.dump(2) << std::endl;
    return 0;
  }
  std::printf("%-12s %-18s %4s %14s %22s  %s\n", "task", "method", "runs", "final / grid's", "mean reaches grid at",
              "runs reach grid at (fraction of the grid's trial-epochs)");
  for (const auto& o : out) {
    std::string runs;
    for (const auto& f : o["runs_reach_grid_at"]) {
      char buf[16];
      std::snprintf(buf, sizeof buf, "%.2f", f.is_null() ? 0.0 : f.get<double>());
      runs += (runs.empty() ? "" : ", ") + (f.is_null() ? std::string("never") : std::string(buf));
    }
    char reach[16] = "never";
    if (!o["mean_reaches_grid_at"].is_null()) std::snprintf(reach, sizeof reach, "%.2f", o["mean_reaches_grid_at"].get<double>());
    std::printf("%-12s %-18s %4zu %14.3f %22s  %s\n", o["task"].get<std::string>().c_str(),
                o["method"].get<std::string>().c_str(), o["runs"].get<size_t>(), o["final"].get<double>(), reach,
                runs.c_str());
  }
  std::fflush(stdout);
  if (png) std::cerr << "wrote " << png->path() << std::endl;
  return 0;
}

Register reg("bench fronts-plot", "Several tasks' bench fronts --json results in one relative plot", run);

}  // namespace
}  // namespace comera::cli
