#pragma once
// Wall-clock forward + backward of tuner candidates on a real TTLinear (dense: nn::Linear), as
// training runs them: inputs that need gradients, fresh parameter gradients each step.
#include "core/formats/tt_shape.h"
#include "search/tuner/candidates.h"

#include <c10/core/ScalarType.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace comera::tuner {

// Wall time is what training waits for. Process CPU time (all threads) counts only the work
// done, so it stays steady on a machine shared with other jobs.
enum class Clock { Wall, Cpu };
Clock parse_clock(const std::string& name);  // "wall" | "cpu"

struct MeasureOptions {
  Clock clock = Clock::Wall;
  int warmup = 2;         // runs per candidate before its first timed one (1 for slow ones)
  double slow_ms = 100;   // a run this long counts as warm already
  int min_repeats = 5;    // timed runs of each candidate still in the race (the decision's
                          // sign test needs 5 to call a plan faster than the merged path)
  int max_repeats = 400;  // sub-ms cases: runs vary by ±25% on a loaded machine
  double budget_ms = 3000;  // timed work per case, spread over the repeats
  double abandon = 3;       // slower than this × the fastest first run: timed once only
  int rotate = 3;           // distinct input sets, used in turn
  double max_peak = 2e8;    // candidates whose model peak exceeds this many elements are not run
  uint64_t seed = 0;
  std::string device = "cpu";  // where the layers run: "cpu", "cuda", "cuda:N"
};

struct Measurement {
  double forward_ms = 0, backward_ms = 0, total_ms = 0;  // medians (backward = total - forward)
  int repeats = 0;                                        // 0: not run (see skipped)
  std::string skipped;                                    // why it was not run
  // Forward + backward of each timed run; entry i of candidates still in the race comes from
  // the same round, so two candidates compare run by run under the same machine load.
  std::vector<double> runs_ms;
};

// One entry per candidate, in order. Candidates run round-robin, one repeat of each per round
// in a shuffled order, so that load changes and cache neighbours hit every candidate alike.
std::vector<Measurement> measure(const std::vector<Candidate>& candidates, const TTShape& shape,
                                 int64_t tokens, at::ScalarType dtype, const MeasureOptions& options,
                                 const std::function<void(const std::string&)>& progress = {});

}  // namespace comera::tuner
