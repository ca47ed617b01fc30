// `comera bench sampler`: the adaptive sweep's samplers (random, motpe, gp-ehvi) on ZDT problems
// with known fronts, through the observe loop a sweep runs: the hypervolume reached after a
// budget of evaluations, over seeds, against the true front's (search/propose/sampler_benchmark.h).
#include "core/util/error.h"
#include "search/cli/command.h"
#include "search/environment.h"
#include "search/propose/sampler_benchmark.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>

namespace comera::cli {
namespace {

nlohmann::json series_json(const propose::HypervolumeSeries& s) {
  return {{"reference", s.box.reference}, {"front_hypervolume", s.box.front_hypervolume},
          {"mean", s.mean}, {"standard_error", s.standard_error}};
}

nlohmann::json result_json(const propose::SamplerResult& r) {
  return {{"problem", r.problem}, {"method", r.method}, {"seeds", r.seeds}, {"checkpoints", r.checkpoints},
          {"near", series_json(r.near)}, {"whole", series_json(r.whole)},
          {"seconds_per_proposal", r.seconds_per_proposal}};
}

void print_result(const propose::SamplerResult& r) {
  for (size_t c = 0; c < r.checkpoints.size(); ++c) {
    const auto& n = r.near;
    const auto& w = r.whole;
    std::printf("%-7s %-8s %6lld  %7.4f ± %6.4f %6.1f%%  %7.3f ± %6.3f %6.1f%%", c == 0 ? r.problem.c_str() : "",
                c == 0 ? r.method.c_str() : "", static_cast<long long>(r.checkpoints[c]), n.mean[c],
                n.standard_error[c], 100 * n.mean[c] / n.box.front_hypervolume, w.mean[c], w.standard_error[c],
                100 * w.mean[c] / w.box.front_hypervolume);
    if (c == 0) std::printf("  %10.2f", 1000 * r.seconds_per_proposal);
    std::printf("\n");
  }
  std::fflush(stdout);
}

int run(int argc, char** argv) {
  auto options = make_options(
      "bench sampler",
      "The adaptive sweep's samplers on ZDT problems with known Pareto fronts (two objectives, n\n"
      "variables in [0, 1]): each seed proposes, evaluates and records --budget points (the initial\n"
      "design included), as a sweep does. Hypervolume mean ± standard error over seeds, and as a\n"
      "share of the true front's, in two boxes: near, reference (1.1, 1.1), where only points close\n"
      "to the true front count; whole, reference (1.1, 11), where every point counts. Wall time per\n"
      "proposal.");
  options.add_options()("budget", "Evaluations per run", cxxopts::value<int64_t>()->default_value("30"))(
      "seeds", "Runs per problem and method (seeds 1..N)", cxxopts::value<int64_t>()->default_value("5"))(
      "problems", "Test problems (zdt1, zdt2, zdt3)", cxxopts::value<std::string>()->default_value("zdt1,zdt2,zdt3"))(
      "methods", "Samplers (random, motpe, gp-ehvi)",
      cxxopts::value<std::string>()->default_value("random,motpe,gp-ehvi"))(
      "variables", "Variables of each problem", cxxopts::value<int64_t>()->default_value("4"))(
      "candidates", "gp-ehvi's acquisition candidates per proposal",
      cxxopts::value<int64_t>()->default_value("2000"))(
      "checkpoints", "Evaluations to report at (default 10, 20, ... and the budget)",
      cxxopts::value<std::string>())("json", "Machine-readable output");
  auto parsed = parse(options, argc, argv);
  if (!parsed) return 0;
  const auto& r = *parsed;
  propose::SamplerBenchmarkOptions o;
  o.budget = r["budget"].as<int64_t>();
  o.seeds = r["seeds"].as<int64_t>();
  o.problems = string_list_flag(r, "problems");
  o.methods = string_list_flag(r, "methods");
  o.variables = r["variables"].as<int64_t>();
  o.candidates = r["candidates"].as<int64_t>();
  if (r.count("checkpoints")) o.checkpoints = int_list_flag(r, "checkpoints", 1);
  if (o.variables < 2) throw Error("--variables must be >= 2 (ZDT's g needs a second variable)");
  if (o.candidates < 1) throw Error("--candidates must be >= 1");
  propose::checked_checkpoints(o);  // before the banner: a bad list is refused before any output
  const bool json = r.count("json") > 0;
  std::ostream& log = json ? std::cerr : std::cout;

  log << "comera bench sampler: " << o.variables << " variables, " << o.budget << " evaluations per run, seeds 1-"
      << o.seeds << " on " << current_environment().describe()
      << "; hypervolume mean ± s.e. over seeds and its share of the true front's\n"
      << "near box: reference (1.1, 1.1), only points near the true front count; whole box: reference (1.1, 11), "
         "every point counts\n\n";
  if (!json)
    std::printf("%-7s %-8s %6s  %-16s %7s  %-16s %7s  %10s\n", "problem", "method", "evals", "near HV", "share",
                "whole HV", "share", "ms/propose");
  nlohmann::json results = nlohmann::json::array();
  propose::benchmark_samplers(o, [&](const propose::SamplerResult& result) {
    if (!json) print_result(result);
    results.push_back(result_json(result));
  });
  if (json) {
    nlohmann::json out = {{"budget", o.budget}, {"seeds", o.seeds}, {"variables", o.variables},
                          {"candidates", o.candidates}, {"results", results}};
    out["environment"] = current_environment().to_json();
    std::cout << out.dump(2) << std::endl;
  }
  return 0;
}

Register reg("bench sampler", "The adaptive sweep's samplers on ZDT problems: hypervolume against the true front",
             run);

}  // namespace
}  // namespace comera::cli
