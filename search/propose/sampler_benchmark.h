#pragma once
// The samplers on problems with a known front: each seed runs the observe loop a sweep runs
// (propose with the trials so far, evaluate, record). The numbers behind `comera bench sampler`,
// and the loop its tests run.
#include "search/propose/proposer.h"
#include "search/propose/test_problems.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace comera::propose {

struct SamplerRun {
  std::vector<pareto::Point> objectives;  // of each evaluation, in order
  double seconds = 0;                     // wall time spent proposing, all proposals together
};

SamplerRun run_sampler(const TestProblem& problem, const ProposerOptions& options, int64_t budget);

// The hypervolume of the run's first `evaluations` points inside `reference`.
double hypervolume_after(const SamplerRun& run, int64_t evaluations, const pareto::Point& reference);

struct SamplerBenchmarkOptions {
  std::vector<std::string> problems{"zdt1", "zdt2", "zdt3"};
  std::vector<std::string> methods{"random", "motpe", "gp-ehvi"};
  int64_t budget = 30;
  int64_t seeds = 5;                 // seeds 1..seeds, the same for every method
  int64_t variables = 4;
  int64_t candidates = 2000;         // gp-ehvi's acquisition candidates
  std::vector<int64_t> checkpoints;  // evaluations to report at; empty: 10, 20, ... and the budget
};

// Hypervolume over the seeds at each checkpoint, inside one reference box.
struct HypervolumeSeries {
  ReferenceBox box;
  std::vector<double> mean, standard_error;
};

struct SamplerResult {
  std::string problem, method;
  int64_t seeds = 0;
  std::vector<int64_t> checkpoints;
  HypervolumeSeries near, whole;     // the problem's two reference boxes
  double seconds_per_proposal = 0;   // mean wall time of one proposal
};

// The checkpoints to report at (the options' own, or their default). Throws comera::Error on an
// unknown problem or method, or a budget, seed count or checkpoint below 1 (a checkpoint past the
// budget too), naming the option as `comera bench sampler` spells it (--methods).
std::vector<int64_t> checked_checkpoints(const SamplerBenchmarkOptions& options);

// Per problem, per method; refuses what checked_checkpoints refuses before any run.
std::vector<SamplerResult> benchmark_samplers(const SamplerBenchmarkOptions& options,
                                              const std::function<void(const SamplerResult&)>& on_result = {});

}  // namespace comera::propose
