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

struct MeasureOptions {
  int warmup = 1;         // untimed runs per candidate
  int min_repeats = 3;    // timed runs of each candidate still in the race
  int max_repeats = 15;
  double budget_ms = 3000;  // timed work per case, spread over the repeats
  double abandon = 3;       // slower than this × the fastest first run: timed once only
  int rotate = 3;           // distinct input sets, used in turn
  double max_peak = 2e8;    // candidates whose model peak exceeds this many elements are not run
  uint64_t seed = 0;
};

struct Measurement {
  double forward_ms = 0, backward_ms = 0, total_ms = 0;  // medians (backward = total - forward)
  int repeats = 0;                                        // 0: not run (see skipped)
  std::string skipped;                                    // why it was not run
};

// One entry per candidate, in order. Candidates run round-robin, one repeat of each in turn,
// so that load changes during the measurement hit every candidate alike.
std::vector<Measurement> measure(const std::vector<Candidate>& candidates, const TTShape& shape,
                                 int64_t tokens, at::ScalarType dtype, const MeasureOptions& options,
                                 const std::function<void(const std::string&)>& progress = {});

}  // namespace comera::tuner
