#include "core/kernels/fast_kernels.h"

namespace comera {

namespace {

// Kernel choices are made on the thread that calls the op (CPU backward runs there too); the few
// made again inside a parallel region sit under a fast path the caller chose already.
thread_local bool t_on = true;

}  // namespace

bool fast_kernels_enabled() { return t_on; }

FastKernelsGuard::FastKernelsGuard(bool on) : previous_(t_on) { t_on = on; }
FastKernelsGuard::~FastKernelsGuard() { t_on = previous_; }

}  // namespace comera
