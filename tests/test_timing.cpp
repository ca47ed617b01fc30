// time_median's wall and CPU clocks: sleeping costs wall time but no CPU time, spinning costs both.
#include "core/util/timing.h"
#include "tests/support/catch.h"

#include <chrono>
#include <thread>

using namespace comera;

TEST_CASE("time_median tells CPU time apart from waiting", "[timing]") {
  const auto sleeping = time_median(
      [](int) { std::this_thread::sleep_for(std::chrono::milliseconds(20)); }, 1, 3);
  CHECK(sleeping.repeats == 3);
  CHECK(sleeping.median_ms >= 20);
  CHECK(sleeping.cpu_median_ms < 5);

  // Spin until this process has used 20 ms of CPU.
  const auto spinning = time_median(
      [](int) {
        const double start = process_cpu_ms();
        while (process_cpu_ms() - start < 20) {
        }
      },
      0, 3);
  CHECK(spinning.cpu_median_ms >= 20);
  CHECK(spinning.cpu_median_ms < 40);
  CHECK(spinning.median_ms >= spinning.cpu_median_ms * 0.99);
}
