// `comera bench fronts DB...`: how fast searches traced a front. Each database holds one sweep
// (its study); runs named METHOD-SEED.db are grouped by METHOD. Per run: the hypervolume after
// each trial against the trial-epochs and training minutes spent (search/pareto/front_trace.h);
// per method: the final hypervolume's mean ± standard error and the compute each run needed to
// reach the target method's final hypervolume (the hand grid's, by default), and the share of it
// each run held at half the target's compute (issue 29's mark). scripts/bench_autotune.sh runs
// the sweeps.
#include "core/util/error.h"
#include "core/util/mean_error.h"
#include "core/util/output_file.h"
#include "search/cli/command.h"
#include "search/pareto/front_trace.h"
#include "search/plot/curve_plot.h"
#include "search/store/studies.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <map>
#include <regex>

namespace comera::cli {
namespace {

struct Run {
  std::string file, label, group, study;
  std::vector<pareto::TraceStep> steps;
};

std::string the_study(store::ResultsDb& db, const std::string& asked) {
  if (!asked.empty()) return asked;
  std::vector<std::string> names;
  for (const auto& s : store::list_studies(db))
    if (s.name != store::kRunsStudy) names.push_back(s.name);
  if (names.size() != 1)
    throw Error(db.path() + " holds " + std::to_string(names.size()) + " sweep studies: name one with --study");
  return names[0];
}

// The first step whose hypervolume reaches `target` (nullptr when none does).
const pareto::TraceStep* reaching(const Run& run, double target) {
  for (const auto& s : run.steps)
    if (s.hypervolume >= target * (1 - 1e-12)) return &s;
  return nullptr;
}

std::string text(double x, const char* format = "%.4g") {
  char buf[32];
  std::snprintf(buf, sizeof buf, format, x);
  return buf;
}

int run(int argc, char** argv) {
  auto options = make_options(
      "bench fronts",
      "Hypervolume against compute for sweeps of one task, one database per sweep (METHOD-SEED.db\n"
      "groups runs by METHOD): the final hypervolume per method over its runs, and the trial-epochs\n"
      "and training minutes each run spent to reach the target method's final hypervolume, and the\n"
      "share of that hypervolume each run held at half the target method's trial-epochs.");
  options.add_options()("dbs", "The sweeps' databases", cxxopts::value<std::vector<std::string>>())(
      "study", "The study in every database (default: each one's only sweep study)",
      cxxopts::value<std::string>()->default_value(""))(
      "objectives", "Objectives (default: the first run's study's)", cxxopts::value<std::string>()->default_value(""))(
      "log", "Objectives whose hypervolume axis is log10 (e.g. size)", cxxopts::value<std::string>()->default_value(""))(
      "ref", "The reference point, one value per objective in its own units (required: the same for every run)",
      cxxopts::value<std::string>())(
      "target", "The method whose mean final hypervolume the others must reach (default: grid, when present)",
      cxxopts::value<std::string>()->default_value("grid"))(
      "plot", "Draw hypervolume against trial-epochs, one line per run, into this PNG",
      cxxopts::value<std::string>()->default_value(""))("json", "Machine-readable output");
  options.parse_positional({"dbs"});
  options.positional_help("DB...");
  auto parsed = parse(options, argc, argv);
  if (!parsed) return 0;
  const auto& r = *parsed;
  if (!r.count("dbs")) throw Error("give the sweeps' databases, e.g. comera bench fronts results/autotune/*.db --ref 2.3e6,0");
  if (!r.count("ref")) throw Error("--ref: give the reference point (one value per objective), the same for every method compared");
  const auto files = r["dbs"].as<std::vector<std::string>>();
  std::optional<OutputFile> png;
  if (!r["plot"].as<std::string>().empty()) png.emplace(r["plot"].as<std::string>(), "--plot", files);

  std::vector<Run> runs;
  pareto::TraceOptions trace;
  std::map<std::filesystem::path, std::string> seen;  // each database once: a copy would count twice
  std::string compared;  // the objectives every study must have, and where they came from
  for (const auto& file : files) {
    if (!std::filesystem::exists(file)) throw Error(file + ": no such database");
    const auto [at, fresh] = seen.emplace(std::filesystem::canonical(file), file);
    if (!fresh) throw Error(file + ": given twice (as " + at->second + "): give each sweep's database once");
    auto db = store::ResultsDb::open(file, store::ResultsDb::Mode::ReadOnly);
    Run run;
    run.file = file;
    run.study = the_study(db, r["study"].as<std::string>());
    const auto study = store::find_study(db, run.study);
    if (!study) throw Error(file + ": no study '" + run.study + "'");
    const auto own = store::parse_objectives(study->objectives);
    const auto same = [&](const store::Objective& o) {
      return std::any_of(own.begin(), own.end(), [&](const auto& x) { return x.name == o.name && x.minimize == o.minimize; });
    };
    if (trace.objectives.empty()) {
      const auto asked = r["objectives"].as<std::string>();
      compared = asked.empty() ? study->objectives + " (those of " + file + ")" : asked + " (--objectives)";
      trace.objectives = store::parse_objectives(asked.empty() ? study->objectives : asked);
      const auto logged = r["log"].as<std::string>().empty() ? std::vector<std::string>{} : string_list_flag(r, "log");
      for (const auto& o : trace.objectives)
        trace.log.push_back(std::find(logged.begin(), logged.end(), o.name) != logged.end());
      for (const auto& name : logged)
        if (std::none_of(trace.objectives.begin(), trace.objectives.end(), [&](const auto& o) { return o.name == name; }))
          throw Error("--log " + name + ": not one of the objectives");
      trace.reference = number_list_flag(r, "ref");
      if (trace.reference.size() != trace.objectives.size())
        throw Error("--ref has " + std::to_string(trace.reference.size()) + " values for " +
                    std::to_string(trace.objectives.size()) + " objectives (give one per objective, in order, e.g. "
                    "--ref 2.3e6,0 for size:min,accuracy:max)");
    }
    if (!std::all_of(trace.objectives.begin(), trace.objectives.end(), same))
      throw Error(file + ": study '" + run.study + "' has objectives " + study->objectives + ", not " + compared +
                  ": compare sweeps of one task, or choose objectives every study has with --objectives");
    run.label = std::filesystem::path(file).stem().string();
    run.group = std::regex_replace(run.label, std::regex("-[0-9]+$"), "");
    run.steps = pareto::front_trace(db, run.study, trace);
    runs.push_back(std::move(run));
  }

  std::map<std::string, std::vector<const Run*>> groups;
  for (const auto& run : runs) groups[run.group].push_back(&run);
  const std::string target_group = r["target"].as<std::string>();
  std::optional<double> target;
  double half_compute = 0;  // half the target method's mean trial-epochs
  if (groups.count(target_group)) {
    std::vector<double> finals, spent;
    for (const auto* run : groups[target_group]) {
      finals.push_back(run->steps.empty() ? 0 : run->steps.back().hypervolume);
      spent.push_back(run->steps.empty() ? 0 : run->steps.back().epochs);
    }
    target = mean_error(finals).mean;
    half_compute = mean_error(spent).mean / 2;
  } else if (r.count("target")) {
    throw Error("--target " + target_group + ": no run of that method (name its databases " + target_group + "-SEED.db)");
  }

  nlohmann::json out = {{"objectives", nlohmann::json::array()}, {"reference", trace.reference}, {"groups", nlohmann::json::array()}};
  for (size_t k = 0; k < trace.objectives.size(); ++k)
    out["objectives"].push_back({{"name", trace.objectives[k].name}, {"minimize", trace.objectives[k].minimize}, {"log10", trace.log[k]}});
  if (target) out["target"] = {{"method", target_group}, {"hypervolume", *target}, {"half_compute", half_compute}};
  for (const auto& [name, members] : groups) {
    nlohmann::json g = {{"method", name}, {"runs", nlohmann::json::array()}};
    std::vector<double> finals, epochs, minutes, reach_epochs, reach_minutes, at_half;
    for (const auto* run : members) {
      const auto last = run->steps.empty() ? pareto::TraceStep{} : run->steps.back();
      finals.push_back(last.hypervolume), epochs.push_back(static_cast<double>(last.epochs)), minutes.push_back(last.minutes);
      nlohmann::json j = {{"file", run->file}, {"study", run->study}, {"hypervolume", last.hypervolume},
                          {"epochs", last.epochs}, {"minutes", last.minutes}, {"steps", nlohmann::json::array()}};
      for (const auto& s : run->steps)
        j["steps"].push_back({{"trial", s.trial}, {"state", s.state}, {"epochs", s.epochs}, {"minutes", s.minutes},
                              {"hypervolume", s.hypervolume}});
      if (target) {
        const auto* hit = reaching(*run, *target);
        j["reaches_target"] = hit ? nlohmann::json({{"epochs", hit->epochs}, {"minutes", hit->minutes}}) : nlohmann::json();
        if (hit) reach_epochs.push_back(static_cast<double>(hit->epochs)), reach_minutes.push_back(hit->minutes);
        // A hypervolume of 0 (no reference point dominated) is 0 of any target.
        at_half.push_back(*target > 0 ? pareto::hypervolume_at(run->steps, half_compute * (1 + 1e-12)) / *target : 0);
        j["at_half_compute"] = at_half.back();
      }
      g["runs"].push_back(j);
    }
    const auto hv = mean_error(finals);
    g["hypervolume"] = {{"mean", hv.mean}, {"se", finals.size() > 1 ? hv.standard_error : 0}};
    g["epochs"] = mean_error(epochs).mean;
    g["minutes"] = mean_error(minutes).mean;
    g["reached_target"] = reach_epochs.size();
    if (target) g["at_half_compute"] = at_half;
    if (!reach_epochs.empty()) {
      g["epochs_to_target"] = mean_error(reach_epochs).mean;
      g["minutes_to_target"] = mean_error(reach_minutes).mean;
    }
    out["groups"].push_back(g);
  }

  if (png) {
    plot::CurvePlot p;
    p.title = "hypervolume against compute";
    p.x_label = "trial-epochs spent";
    p.y_label = "hypervolume";
    p.key = "bottom right";
    for (const auto& run : runs) {
      plot::Curve c;
      c.label = run.label;
      c.dashed = run.group == target_group;
      // One colour per method, its seeds alike.
      c.color = static_cast<int>(std::distance(groups.begin(), groups.find(run.group))) + 1;
      for (const auto& s : run.steps) c.points.push_back({static_cast<double>(s.epochs), s.hypervolume});
      p.curves.push_back(c);
    }
    png->write([&](const std::string& file) { plot::write_curve_png(p, file); });
  }
  if (r.count("json")) {
    std::cout << out.dump(2) << std::endl;
    return 0;
  }
  std::cout << "hypervolume against compute; objectives";
  for (size_t k = 0; k < trace.objectives.size(); ++k)
    std::cout << (k ? ", " : " ") << trace.objectives[k].name << (trace.objectives[k].minimize ? ":min" : ":max")
              << (trace.log[k] ? " (log10)" : "") << " ref " << trace.reference[k];
  std::cout << "\n";
  if (target)
    std::cout << "target: " << target_group << "'s mean final hypervolume, " << text(*target) << ", and half its "
              << text(2 * half_compute) << " trial-epochs, " << text(half_compute) << "\n";
  std::printf("\n%-20s %4s %-20s %12s %9s %s\n", "method", "runs", "final hypervolume", "trial-epochs", "minutes",
              target ? "to reach the target: trial-epochs, minutes (runs reaching it); share of it at half compute, per run"
                     : "");
  for (const auto& g : out["groups"]) {
    const std::string hv = text(g["hypervolume"]["mean"].get<double>()) +
                           (g["runs"].size() > 1 ? " ± " + text(g["hypervolume"]["se"].get<double>(), "%.2g") : "");
    std::string reach;
    if (target)
      reach = (g.contains("epochs_to_target") ? text(g["epochs_to_target"].get<double>(), "%.1f") + ", " +
                                                    text(g["minutes_to_target"].get<double>(), "%.2f")
                                              : std::string("-")) +
              " (" + std::to_string(g["reached_target"].get<size_t>()) + "/" + std::to_string(g["runs"].size()) + ");";
    if (target)
      for (size_t i = 0; i < g["at_half_compute"].size(); ++i)
        reach += (i ? ", " : " ") + text(g["at_half_compute"][i].get<double>(), "%.3f");
    std::printf("%-20s %4zu %-20s %12.1f %9.2f %s\n", g["method"].get<std::string>().c_str(), g["runs"].size(),
                hv.c_str(), g["epochs"].get<double>(), g["minutes"].get<double>(), reach.c_str());
  }
  if (png) std::cerr << "wrote " << png->path() << std::endl;
  return 0;
}

Register reg("bench fronts", "Hypervolume against compute for sweeps of one task (one database each)", run);

}  // namespace
}  // namespace comera::cli
