// time_median's measurement: warm-up runs untimed, each repeat timed by wall and CPU clocks,
// medians and extremes, on clocks the test drives (deterministic); and the machine's clocks
// telling CPU work apart from waiting.
#include "core/util/timing.h"
#include "tests/support/catch.h"

#include <chrono>
#include <thread>
#include <vector>

using namespace comera;

TEST_CASE("time_median times each repeat after the warm-up on the clocks it is given", "[timing]") {
  // Repeat i takes walls[i] ms of wall time and cpus[i] ms of CPU time on the test's clocks.
  const std::vector<double> walls = {100, 7, 3, 5, 11, 2}, cpus = {100, 1, 6, 2, 4, 9};
  double wall = 0, cpu = 0, started = -1;
  std::vector<int> calls;
  const RepeatClocks clocks{[&] { started = wall; }, [&] { return wall - started; }, [&] { return cpu; }};
  const auto t = time_median(
      [&](int i) {
        calls.push_back(i);
        wall += walls[i];
        cpu += cpus[i];
      },
      2, 4, clocks);
  CHECK(calls == std::vector<int>{0, 1, 2, 3, 4, 5});
  CHECK(t.repeats == 4);
  CHECK(t.median_ms == 4);      // of 3, 5, 11, 2
  CHECK(t.min_ms == 2);
  CHECK(t.max_ms == 11);
  CHECK(t.cpu_median_ms == 5);  // of 6, 2, 4, 9
  // At least one repeat, however few are asked for.
  calls.clear();
  CHECK(time_median([&](int i) { calls.push_back(i); }, 0, 0, clocks).repeats == 1);
  CHECK(calls == std::vector<int>{0});
}

TEST_CASE("the machine's clocks: sleeping costs wall time, not CPU time", "[timing]") {
  // 50 ms asleep against a CPU budget of half of it: only a clock mix-up fails this. Medians of
  // 3 repeats: single repeats flaked under ctest -j2, where a loaded machine's wake-ups cost
  // milliseconds.
  const auto sleeping = time_median(
      [](int) { std::this_thread::sleep_for(std::chrono::milliseconds(50)); }, 0, 3);
  CHECK(sleeping.median_ms >= 50);
  CHECK(sleeping.cpu_median_ms < 25);
  // Spinning until 20 ms of CPU are used is counted as CPU time.
  const auto spinning = time_median(
      [](int) {
        const double start = process_cpu_ms();
        while (process_cpu_ms() - start < 20) {
        }
      },
      0, 3);
  CHECK(spinning.cpu_median_ms >= 20);
  CHECK(spinning.median_ms > 0);
}
