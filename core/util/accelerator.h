#pragma once
// What a run needs from the device beyond ATen: waiting for it, timing on its own clock, its
// memory peaks and its name. On the CPU these are the host's; CUDA needs a build with CUDA
// (COMERA_CUDA, on when the LibTorch found has it), and asking for it otherwise is an error.
#include <c10/core/Device.h>

#include <cstdint>
#include <memory>
#include <string>

namespace comera {

// Whether this binary was built with CUDA support.
bool built_with_cuda();

// Returns once the device has finished the work queued so far (nothing to wait for on the CPU).
void synchronize(const c10::Device& device);

// Elapsed time of the work queued between start() and stop_ms(): CUDA events on the device's
// current stream (the GPU's clock, not the launches'), the host's steady clock on the CPU.
class DeviceTimer {
 public:
  explicit DeviceTimer(const c10::Device& device);
  ~DeviceTimer();
  DeviceTimer(const DeviceTimer&) = delete;
  DeviceTimer& operator=(const DeviceTimer&) = delete;
  void start();
  double stop_ms();  // waits for the device

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Peaks of a CUDA device's caching allocator since construction (which resets them): bytes of
// live tensors (max_memory_allocated) and bytes the allocator held (max_memory_reserved).
class DeviceMemoryPeak {
 public:
  struct Bytes {
    int64_t allocated = 0, reserved = 0;
  };
  explicit DeviceMemoryPeak(const c10::Device& device);  // throws on the CPU: use CpuMemoryMeter
  Bytes at_start() const { return start_; }
  Bytes peak() const;     // waits for the device
  Bytes current() const;  // waits for the device

 private:
  c10::Device device_;
  Bytes start_;
};

// "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs), driver 13.0, runtime 13.0" for a GPU; the CPU's
// model and its BLAS kernels ("AMD EPYC 9654 96-Core Processor, OpenBLAS Haswell") for the CPU.
std::string device_description(const c10::Device& device);

}  // namespace comera
