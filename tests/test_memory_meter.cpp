// CpuMemoryMeter against tensors of known size.
#include "core/util/memory_meter.h"
#include "tests/support/catch.h"

#include <ATen/ATen.h>

using namespace comera;

TEST_CASE("memory meter sees tensor storage come and go", "[memory_meter]") {
  const at::Tensor before = at::ones({1000});  // allocated before any meter: freed normally
  CpuMemoryMeter meter;
  CHECK(meter.peak_extra_bytes() == 0);
  {
    at::Tensor a = at::empty({1000, 250});  // 1,000,000 bytes
    CHECK(meter.live_extra_bytes() == 1000000);
    at::Tensor b = at::empty({500}, at::kDouble);  // 4,000 bytes
    CHECK(meter.live_extra_bytes() == 1004000);
  }
  CHECK(meter.live_extra_bytes() == 0);
  CHECK(meter.peak_extra_bytes() == 1004000);
  {
    at::Tensor c = at::empty({10});
    CHECK(meter.peak_extra_bytes() == 1004000);  // peak kept until a new meter
  }
  CpuMemoryMeter fresh;
  CHECK(fresh.peak_extra_bytes() == 0);
  CHECK(before.sum().item<float>() == 1000.0f);
}
