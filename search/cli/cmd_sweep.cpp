// `comera sweep SPEC`: runs a sweep's trials into a results database (resumable, shardable, safe
// with several processes on one database), then prints the study's Pareto front.
#include "core/util/device.h"
#include "core/util/error.h"
#include "core/util/format.h"
#include "core/util/output_file.h"
#include "search/cli/command.h"
#include "search/cli/stop_signals.h"
#include "search/cli/training_output.h"
#include "search/cli/db_option.h"
#include "search/cli/pause_point.h"
#include "search/cli/report_output.h"
#include "search/pareto/front_report.h"
#include "search/runs/shared_early_stage.h"
#include "search/runs/trial_recorder.h"
#include "search/store/flat_table.h"
#include "search/sweep/adaptive.h"
#include "search/sweep/published_figures.h"
#include "search/sweep/sweep_runner.h"
#include "search/sweep/trial_expansion.h"

#include <iostream>
#include <map>
#include <optional>

namespace comera::cli {
namespace {

// The trials a run would claim, without running anything.
int list_trials(const sweep::SweepSpec& spec, const sweep::Shard& shard, bool json) {
  const auto configs = sweep::expand_trials(spec);
  const auto positions = sweep::shard_positions(configs.size(), shard);
  nlohmann::json rows = nlohmann::json::array();
  store::FlatTable table;
  table.columns = {"position", "kind", "point", "early stage"};
  // Within one database (a shard's), a trial whose early stage an earlier one trains starts from it.
  std::map<std::string, size_t> trains;  // early-stage key -> the position that trains it
  int64_t epochs = 0, shared = 0;
  for (size_t p : positions) {
    nlohmann::json row = {{"position", p + 1}, {"config", configs[p]}};
    std::string point;
    for (const auto& [key, value] : configs[p]["point"].items())
      point += (point.empty() ? "" : " ") + key + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
    std::string early;
    if (!configs[p].contains("step")) {
      const auto e = parse_experiment(configs[p]["experiment"]);
      int64_t own = e.training.epochs;
      if (const auto key = early_stage_key(e); !key.empty()) {
        const auto [at, first] = trains.emplace(key, p);
        if (!first) {
          early = "from " + std::to_string(at->second + 1);
          own -= e.training.late.start_epoch;
          row["early_stage_from"] = at->second + 1;
        }
      }
      row["trial_epochs"] = own;
      epochs += e.training.epochs;
      shared += e.training.epochs - own;
    }
    rows.push_back(std::move(row));
    table.rows.push_back({p + 1, configs[p]["kind"], point, early});
  }
  if (json) {
    std::cout << nlohmann::json{{"sweep", spec.name}, {"trials", rows}, {"trial_epochs", epochs - shared},
                                {"shared_epochs", shared}, {"adaptive", spec.sampling.adaptive}}
                     .dump(2)
              << "\n";
    return 0;
  }
  std::cout << "sweep " << spec.name << ": " << configs.size() << " trials";
  if (spec.sampling.adaptive) std::cout << ", then trials proposed by " << sweep::describe_sampling(spec);
  if (shard.count > 1) std::cout << ", " << positions.size() << " in shard " << shard.index << "/" << shard.count;
  if (epochs > 0)
    std::cout << "; " << epochs - shared << " trial-epochs to train"
              << (shared > 0 ? " (" + std::to_string(shared) + " more shared from early stages trained once)" : "");
  std::cout << "\n\n";
  store::write_text(std::cout, table);
  return 0;
}

int run(int argc, char** argv) {
  auto options = make_options(
      "sweep",
      "Run a sweep spec's trials into a results database. Running the same command again\n"
      "resumes: finished trials are kept, trials of a killed process are run again, trials of\n"
      "a silent worker on another host are marked failed. Several processes (or machines, with\n"
      "--shard and `comera merge`) may share the work.");
  add_db_option(options);
  options.add_options()("spec", "Sweep spec (JSON), e.g. experiments/sweeps/quickstart.json",
                        cxxopts::value<std::string>())(
      "shard", "Run only shard i of N (1-based), e.g. 2/4", cxxopts::value<std::string>()->default_value("1/1"))(
      "retry-failed", "Queue the failed trials again first")(
      "resume-pruned", "Queue the pruned trials again, to run on from their checkpoints to their end")(
      "stale-after",
      "Seconds without a heartbeat after which a running trial of another host is failed (at "
      "least " + std::to_string(kMinStaleAfter.count()) +
          "; trials of this host last as long as their process)",
      cxxopts::value<double>()->default_value("300"))(
      "max-trials", "Run at most this many trials, then stop (0: all)",
      cxxopts::value<int64_t>()->default_value("0"))(
      "propose", "Adaptive sweeps in rounds across hosts: propose this many trials, run none "
      "(shards of copies of the database then run them; scripts/slurm_sweep.sh --rounds)",
      cxxopts::value<int64_t>()->default_value("0"))(
      "reference", "Published figures for the spec's JSON pointers",
      cxxopts::value<std::string>()->default_value(sweep::default_figures_file()))(
      "plot", "Also draw the study's Pareto front into this PNG", cxxopts::value<std::string>()->default_value(""))(
      "report", "Also write the study's HTML report into this file (as `comera report` does)",
      cxxopts::value<std::string>()->default_value(""))(
      "no-front", "Do not print the Pareto front at the end")(
      "dry-run", "List this shard's trials and exit")(
      "quiet", "No per-step progress line")(
      "device", "Where every trial computes: cpu, cuda or cuda:N (default: each trial's training.device)",
      cxxopts::value<std::string>())(
      "json", "With --dry-run: as JSON (each trial's position, config, trial-epochs to train and the "
              "position whose early stage it starts from; the totals)");
  options.parse_positional({"spec"});
  options.positional_help("SPEC");
  auto parsed = parse(options, argc, argv);
  if (!parsed) return 0;
  const auto& r = *parsed;
  if (!r.count("spec"))
    throw Error("give a sweep spec, e.g. comera sweep experiments/sweeps/quickstart.json --db results/quickstart.db");
  if (r["max-trials"].as<int64_t>() < 0)
    throw Error("--max-trials " + std::to_string(r["max-trials"].as<int64_t>()) +
                ": give 0 (every trial) or how many trials to run");
  const auto spec = sweep::load_sweep_spec(r["spec"].as<std::string>(), r["reference"].as<std::string>());
  sweep::SweepOptions so;
  so.shard = sweep::parse_shard(r["shard"].as<std::string>());
  so.stale_after_s = r["stale-after"].as<double>();
  so.max_trials = r["max-trials"].as<int64_t>();
  so.propose_only = r["propose"].as<int64_t>();
  if (so.propose_only < 0) throw Error("--propose " + std::to_string(so.propose_only) + ": give how many trials to propose");
  sweep::check_sweep_options(spec, so);
  // The dry run refuses what the run would, so a listed plan is one that starts.
  so.db_path = db_path(r);
  auto reads = sweep::sweep_inputs(spec, so.db_path);
  reads.push_back(r["reference"].as<std::string>());
  std::optional<OutputFile> png, html;
  if (!r["plot"].as<std::string>().empty()) png.emplace(r["plot"].as<std::string>(), "--plot", reads);
  if (!r["report"].as<std::string>().empty()) html.emplace(r["report"].as<std::string>(), "--report", reads);
  if (png && html) png->require_distinct(*html);
  if (r.count("device")) {
    const auto device = parse_device(r["device"].as<std::string>());
    require_device(device);
    so.device = device.str();
  }
  if (r.count("dry-run")) return list_trials(spec, so.shard, r.count("json") > 0);

  so.retry_failed = r.count("retry-failed") > 0;
  so.resume_pruned = r.count("resume-pruned") > 0;
  ProgressLine line(!r.count("quiet"), true);
  so.trials = trial_reporting(line);
  pause_at_from_environment(so.trials);
  so.on_message = so.trials.on_message;
  so.trials.stop = &stop_on_signals();
  const auto report = sweep::run_sweep(spec, so);
  std::cerr << "sweep " << report.study << ": " << sweep::describe_states(report) << "; ran "
            << report.ran << " in " << format_duration(report.seconds) << std::endl;
  if (so.propose_only > 0) {
    std::cerr << "proposed " << report.proposed << " trial(s): run them with --shard i/N on copies of " << so.db_path
              << ", then merge the copies back" << std::endl;
    return 0;
  }
  if (stop_signal() != 0) {
    std::cerr << "stopped by signal " << stop_signal() << ": run the same command to go on" << std::endl;
    return signal_exit_code();
  }

  const bool any_complete = report.states.count("complete") > 0;
  const bool print_front = !r.count("no-front");
  // --no-front leaves out the printed front, not the plot asked for.
  if ((print_front || png) && any_complete) {
    auto db = store::ResultsDb::open(so.db_path, store::ResultsDb::Mode::ReadOnly);
    const auto front = pareto::study_front(db, {spec.name, "", {}, {}});
    if (print_front) {
      std::cout << "\n";
      pareto::write_front_text(std::cout, front, false);
    }
    if (png) {
      png->write([&](const std::string& file) { pareto::write_png(pareto::front_plot(front), file); });
      std::cerr << "wrote " << png->path() << std::endl;
    }
  } else if (png) {
    std::cerr << "no complete trial in study " << spec.name << " yet: " << png->path()
              << " not written (run the sweep on to draw it)" << std::endl;
  }
  if (html) {
    report::ReportOptions ro;
    ro.studies = {spec.name};
    write_report(*html, so.db_path, ro);
    std::cerr << "wrote " << html->path() << std::endl;
  }
  return report.states.count("failed") ? 1 : 0;
}

Register reg("sweep", "Run a sweep spec's trials (resumable, shardable, concurrent)", run);

}  // namespace
}  // namespace comera::cli
