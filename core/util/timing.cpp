#include "core/util/timing.h"

#include "core/util/accelerator.h"

#include <algorithm>
#include <ctime>

namespace comera {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double process_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

Timing time_median(const std::function<void(int)>& fn, int warmup, int repeats, const RepeatClocks& clocks) {
  for (int i = 0; i < warmup; ++i) fn(i);
  repeats = std::max(1, repeats);
  std::vector<double> ms, cpu;
  ms.reserve(repeats);
  cpu.reserve(repeats);
  for (int i = 0; i < repeats; ++i) {
    const double c0 = clocks.cpu_ms();
    clocks.start();
    fn(warmup + i);
    ms.push_back(clocks.stop_ms());
    cpu.push_back(clocks.cpu_ms() - c0);
  }
  Timing t;
  t.repeats = repeats;
  t.median_ms = median(ms);
  t.cpu_median_ms = median(cpu);
  t.min_ms = *std::min_element(ms.begin(), ms.end());
  t.max_ms = *std::max_element(ms.begin(), ms.end());
  return t;
}

Timing time_median(const std::function<void(int)>& fn, int warmup, int repeats, const c10::Device& device) {
  DeviceTimer timer(device);
  // Work queued on a device before the first repeat (warm-up, the caller's) is not timed with it.
  if (warmup <= 0) synchronize(device);
  auto synced = [&](int i) {
    fn(i);
    if (i == warmup - 1) synchronize(device);
  };
  return time_median(synced, warmup, repeats,
                     {[&] { timer.start(); }, [&] { return timer.stop_ms(); }, process_cpu_ms});
}

}  // namespace comera
