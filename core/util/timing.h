#pragma once
// Wall-clock and process CPU-time measurement for benchmarks and the tuner: warm-up, then the
// median of repeats.
#include <functional>
#include <vector>

namespace comera {

struct Timing {
  double median_ms = 0, min_ms = 0, max_ms = 0;
  // Median process CPU time (all threads): on a shared machine it tells the work done apart
  // from time spent waiting for a core, which wall time mixes in.
  double cpu_median_ms = 0;
  int repeats = 0;
};

// Runs fn `warmup` times unmeasured, then `repeats` times measured (each at least once).
// fn receives the repeat index so callers can rotate inputs.
Timing time_median(const std::function<void(int)>& fn, int warmup, int repeats);

double median(std::vector<double> values);

// Process CPU time (all threads), in ms: on a shared machine it tells the work done apart from
// time spent waiting for a core, which wall time mixes in.
double process_cpu_ms();

}  // namespace comera
