#pragma once
// Wall-clock and process CPU-time measurement for benchmarks and the tuner: warm-up, then the
// median of repeats.
#include <c10/core/Device.h>

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

// What one repeat is timed with: `start` then `stop_ms` give its wall time, `cpu_ms` reads a
// process CPU clock (ms, any origin). Tests give clocks of their own.
struct RepeatClocks {
  std::function<void()> start;
  std::function<double()> stop_ms;
  std::function<double()> cpu_ms;
};

// Runs fn `warmup` times unmeasured, then `repeats` times measured (each at least once).
// fn receives the repeat index so callers can rotate inputs.
Timing time_median(const std::function<void(int)>& fn, int warmup, int repeats, const RepeatClocks& clocks);

// The same with the machine's clocks: on a CPU the steady clock and process_cpu_ms(); on a GPU
// each repeat is timed with the device's events (core/util/accelerator.h), so queued work
// counts, not its launch.
Timing time_median(const std::function<void(int)>& fn, int warmup, int repeats,
                   const c10::Device& device = c10::Device(c10::kCPU));

double median(std::vector<double> values);

// Process CPU time (all threads), in ms: on a shared machine it tells the work done apart from
// time spent waiting for a core, which wall time mixes in.
double process_cpu_ms();

}  // namespace comera
