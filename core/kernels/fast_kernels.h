#pragma once
// The one switch for the fast kernels (core/kernels/cpu/). On (the default), a function with a
// fast kernel runs it where the kernel takes the tensors (device, dtype, CPU features); off,
// every such function takes its composite path: ATen ops only, with ordinary autograd, the same
// on every device. Tests switch it off to check the composite paths on the CPU.

namespace comera {

bool fast_kernels_enabled();
void set_fast_kernels(bool on);

// Sets the switch for a scope and restores the previous value on exit.
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
