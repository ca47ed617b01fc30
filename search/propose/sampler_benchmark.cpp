#include "search/propose/sampler_benchmark.h"

#include "core/util/comma_list.h"
#include "core/util/error.h"
#include "core/util/mean_error.h"
#include "search/pareto/hypervolume.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace comera::propose {

namespace {

void summarise(HypervolumeSeries& series, const std::vector<SamplerRun>& runs, const std::vector<int64_t>& checkpoints) {
  for (int64_t c : checkpoints) {
    std::vector<double> values;
    for (const auto& run : runs) values.push_back(hypervolume_after(run, c, series.box.reference));
    const auto m = mean_error(values);
    series.mean.push_back(m.mean);
    series.standard_error.push_back(runs.size() > 1 ? m.standard_error : 0);
  }
}

}  // namespace

SamplerRun run_sampler(const TestProblem& problem, const ProposerOptions& options, int64_t budget) {
  SamplerRun run;
  std::vector<Observation> done;
  for (int64_t t = 0; t < budget; ++t) {
    const auto start = std::chrono::steady_clock::now();
    auto proposal = propose(problem.space, done, {}, options);
    run.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    auto y = problem.evaluate(proposal.x);
    run.objectives.push_back(y);
    done.push_back({std::move(proposal.x), std::move(y)});
  }
  return run;
}

double hypervolume_after(const SamplerRun& run, int64_t evaluations, const pareto::Point& reference) {
  const auto n = std::min(run.objectives.size(), static_cast<size_t>(std::max<int64_t>(evaluations, 0)));
  return pareto::hypervolume({run.objectives.begin(), run.objectives.begin() + static_cast<std::ptrdiff_t>(n)},
                             reference);
}

std::vector<int64_t> checked_checkpoints(const SamplerBenchmarkOptions& options) {
  if (options.budget < 1 || options.seeds < 1)
    throw Error("--budget " + std::to_string(options.budget) + " and --seeds " + std::to_string(options.seeds) +
                ": give at least 1 of each");
  const auto methods = proposer_methods();
  for (const auto& m : options.methods)
    if (std::find(methods.begin(), methods.end(), m) == methods.end())
      throw Error("--methods: unknown sampler '" + m + "' (use " + join_names(methods) + ")");
  for (const auto& name : options.problems) {
    try {
      test_problem(name, options.variables);
    } catch (const Error& e) {
      throw Error("--problems: " + std::string(e.what()));
    }
  }
  auto checkpoints = options.checkpoints;
  if (checkpoints.empty()) {
    for (int64_t b = 10; b < options.budget; b += 10) checkpoints.push_back(b);
    checkpoints.push_back(options.budget);
  }
  for (int64_t c : checkpoints)
    if (c < 1 || c > options.budget)
      throw Error("--checkpoints: " + std::to_string(c) + " is outside 1.." + std::to_string(options.budget) +
                  " (report at evaluations within --budget)");
  return checkpoints;
}

std::vector<SamplerResult> benchmark_samplers(const SamplerBenchmarkOptions& options,
                                              const std::function<void(const SamplerResult&)>& on_result) {
  const auto checkpoints = checked_checkpoints(options);
  std::vector<TestProblem> problems;
  for (const auto& name : options.problems) problems.push_back(test_problem(name, options.variables));
  std::vector<SamplerResult> results;
  for (const auto& problem : problems)
    for (const auto& method : options.methods) {
      SamplerResult r;
      r.problem = problem.name, r.method = method, r.seeds = options.seeds, r.checkpoints = checkpoints;
      std::vector<SamplerRun> runs;
      double seconds = 0;
      for (int64_t s = 1; s <= options.seeds; ++s) {
        ProposerOptions o;
        o.method = method, o.seed = static_cast<uint64_t>(s), o.candidates = options.candidates;
        runs.push_back(run_sampler(problem, o, options.budget));
        seconds += runs.back().seconds;
      }
      r.near.box = problem.near, r.whole.box = problem.whole;
      summarise(r.near, runs, checkpoints);
      summarise(r.whole, runs, checkpoints);
      r.seconds_per_proposal = seconds / static_cast<double>(options.seeds * options.budget);
      if (on_result) on_result(r);
      results.push_back(std::move(r));
    }
  return results;
}

}  // namespace comera::propose
