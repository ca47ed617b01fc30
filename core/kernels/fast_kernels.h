#pragma once
// The one switch for the fast kernels (core/kernels/cpu/). On (the default), a function with a
// fast kernel runs it where the kernel takes the tensors (device, dtype, CPU features); off,
// every such function takes its composite path: ATen ops only, with ordinary autograd, the same
// on every device. The switch is per thread and set for a scope (a trainer's option, a
// benchmark's flag, a test checking the composite paths), so no caller changes another's.

namespace comera {

// On unless a guard on this thread switched it off.
bool fast_kernels_enabled();

// Sets the switch on this thread for a scope and restores the previous value on exit.
class FastKernelsGuard {
 public:
  explicit FastKernelsGuard(bool on);
  ~FastKernelsGuard();
  FastKernelsGuard(const FastKernelsGuard&) = delete;
  FastKernelsGuard& operator=(const FastKernelsGuard&) = delete;

 private:
  bool previous_;
};

}  // namespace comera
