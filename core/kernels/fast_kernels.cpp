#include "core/kernels/fast_kernels.h"

#include <atomic>

namespace comera {

namespace {

std::atomic<bool>& switched_on() {
  static std::atomic<bool> on{true};
  return on;
}

}  // namespace

bool fast_kernels_enabled() { return switched_on().load(std::memory_order_relaxed); }
void set_fast_kernels(bool on) { switched_on() = on; }

FastKernelsGuard::FastKernelsGuard(bool on) : previous_(switched_on().exchange(on)) {}
FastKernelsGuard::~FastKernelsGuard() { set_fast_kernels(previous_); }

}  // namespace comera
