// `comera plot curves`: per-epoch loss curves of runs from the results database in one PNG, e.g.
// a tensorized pre-training run beside its dense twin (`comera train` and `comera train --dense`).
#include "core/util/comma_list.h"
#include "core/util/error.h"
#include "core/util/output_file.h"
#include "search/cli/command.h"
#include "search/cli/db_option.h"
#include "search/plot/curve_plot.h"
#include "search/store/epoch_metrics.h"
#include "search/store/trials.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <iostream>

namespace comera::cli {
namespace {

struct Run {
  int64_t trial = 0;
  std::string label;
  std::vector<store::EpochRecord> epochs;
};

double metric(const store::EpochRecord& e, const std::string& name) {
  const auto it = e.metrics.find(name);
  return it == e.metrics.end() ? NAN : it->second;
}

// Mean of a metric over a run's epochs (NaN when none has it).
double mean_of(const Run& run, const std::string& name) {
  double sum = 0;
  int n = 0;
  for (const auto& e : run.epochs)
    if (std::isfinite(metric(e, name))) sum += metric(e, name), ++n;
  return n ? sum / n : NAN;
}

int run(int argc, char** argv) {
  auto options = make_options(
      "plot curves",
      "Per-epoch curves of training runs recorded in the results database, in one PNG (gnuplot):\n"
      "--metric (default eval_loss) as solid lines and train_loss dashed, one colour per run. With\n"
      "--name NAME, the newest run of the experiment NAME and of NAME_dense (what `comera train` and\n"
      "`comera train --dense` record); or --trials ID,ID. Prints the epochs side by side and the\n"
      "per-step speed ratio (mean step time of the last run over the first's).");
  options.add_options()("name", "Experiment name: its newest run and its _dense twin's", cxxopts::value<std::string>())(
      "trials", "Trial ids instead of --name (the database ids: runs list's and pareto's id column)", cxxopts::value<std::string>())(
      "metric", "Per-epoch metric drawn solid", cxxopts::value<std::string>()->default_value("eval_loss"))(
      "out", "PNG file (default results/plots/NAME_curves.png)", cxxopts::value<std::string>()->default_value(""))(
      "json", "Print the runs' epochs and the speed ratio as JSON");
  add_db_option(options);
  auto parsed = parse(options, argc, argv);
  if (!parsed) return 0;
  const auto& r = *parsed;
  if (r.count("name") == r.count("trials"))
    throw Error("give --name NAME (a run and its _dense twin) or --trials ID,ID");
  const std::string name = r.count("name") ? r["name"].as<std::string>() : "trials";
  const std::string out = r["out"].as<std::string>().empty() ? "results/plots/" + name + "_curves.png"
                                                             : r["out"].as<std::string>();
  const std::string metric_name = r["metric"].as<std::string>();
  const OutputFile png(out, "--out", {db_path(r)});
  auto db = store::ResultsDb::open(db_path(r), store::ResultsDb::Mode::ReadOnly);

  std::vector<Run> runs;
  if (r.count("name")) {
    for (const auto& n : {name, name + "_dense"}) {
      const int64_t id = plot::latest_trial_named(db, n);
      if (id == 0)
        throw Error("no run named " + n + " in " + db_path(r) + " (run `comera train --config experiments/" +
                    name + ".json" + (n == name ? "" : " --dense") + "` first)");
      runs.push_back({id, n + " (trial " + std::to_string(id) + ")", {}});
    }
  } else {
    for (const auto id : int_list(r["trials"].as<std::string>(), "--trials", 1)) {
      if (!store::load_trial(db, id))
        throw Error("--trials: no trial " + std::to_string(id) + " in " + db_path(r) +
                    " (--trials takes the id column of `comera runs list --db " + db_path(r) + "`)");
      runs.push_back({id, "trial " + std::to_string(id), {}});
    }
  }
  plot::CurvePlot p;
  p.title = name + ": " + metric_name + " (solid) and train_loss (dashed) per epoch";
  p.y_label = "loss";
  for (auto& run : runs) {
    run.epochs = store::read_epochs(db.sql(), run.trial);
    if (run.epochs.empty()) throw Error("trial " + std::to_string(run.trial) + " has no recorded epoch");
    p.curves.push_back(plot::trial_curve(db, run.trial, metric_name, run.label + " " + metric_name));
    auto train = plot::trial_curve(db, run.trial, "train_loss", run.label + " train_loss");
    train.dashed = true;
    p.curves.push_back(train);
    if (p.curves[p.curves.size() - 2].points.empty())
      throw Error("trial " + std::to_string(run.trial) + " recorded no " + metric_name + " (see `comera query`)");
  }
  // The first run is the tensorized one with --name; speed-up = the other's step time over its.
  const double speedup = mean_of(runs.back(), "step_time_ms") / mean_of(runs.front(), "step_time_ms");

  if (r.count("json")) {
    nlohmann::json j = {{"runs", nlohmann::json::array()}, {"step_time_ratio", speedup}, {"png", out}};
    for (const auto& run : runs) {
      nlohmann::json epochs = nlohmann::json::array();
      for (const auto& e : run.epochs) epochs.push_back({{"epoch", e.epoch}, {"step", e.step}, {"metrics", e.metrics}});
      j["runs"].push_back({{"trial", run.trial}, {"label", run.label}, {"epochs", epochs}});
    }
    std::cout << j.dump(2) << std::endl;
  } else {
    std::printf("| epoch |");
    for (const auto& run : runs) std::printf(" %s %s | accuracy | step ms |", run.label.c_str(), metric_name.c_str());
    std::printf("\n|---:|");
    for (size_t i = 0; i < runs.size(); ++i) std::printf("---:|---:|---:|");
    std::printf("\n");
    size_t longest = 0;
    for (const auto& run : runs) longest = std::max(longest, run.epochs.size());
    for (size_t k = 0; k < longest; ++k) {
      std::printf("| %zu |", k);
      for (const auto& run : runs) {
        if (k >= run.epochs.size()) {
          std::printf(" | | |");
          continue;
        }
        const auto& e = run.epochs[k];
        std::printf(" %.4f | %.4f | %.1f |", metric(e, metric_name), metric(e, "accuracy"), metric(e, "step_time_ms"));
      }
      std::printf("\n");
    }
    std::printf("mean step time, %s over %s: %.2fx\n", runs.back().label.c_str(), runs.front().label.c_str(), speedup);
  }
  png.write([&](const std::string& file) { plot::write_curve_png(p, file); });
  std::cerr << "wrote " << out << std::endl;
  return 0;
}

Register reg("plot curves", "Loss curves of runs (e.g. tensorized vs dense) in one PNG", run);

}  // namespace
}  // namespace comera::cli
