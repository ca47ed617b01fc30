#include "core/util/accelerator.h"

#include "core/util/blas_kernels.h"
#include "core/util/error.h"

#include <chrono>
#include <fstream>

#ifdef COMERA_WITH_CUDA
#include <ATen/ATen.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#endif

namespace comera {

namespace {

#ifdef COMERA_WITH_CUDA
void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw Error(std::string(what) + ": " + cudaGetErrorString(status));
}

c10::DeviceIndex index_of(const c10::Device& device) {
  return device.has_index() ? device.index() : c10::cuda::current_device();
}
#endif

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      auto pos = line.find(':');
      if (pos != std::string::npos) return line.substr(pos + 2);
    }
  return "unknown cpu";
}

[[noreturn, maybe_unused]] void no_cuda(const c10::Device& device) {
  throw Error("device " + device.str() + ": this comera was built without CUDA (configure it "
              "against a CUDA LibTorch, where COMERA_CUDA turns on, or run with --device cpu)");
}

}  // namespace

bool built_with_cuda() {
#ifdef COMERA_WITH_CUDA
  return true;
#else
  return false;
#endif
}

void synchronize(const c10::Device& device) {
  if (device.is_cpu()) return;
#ifdef COMERA_WITH_CUDA
  check(cudaStreamSynchronize(c10::cuda::getCurrentCUDAStream(index_of(device)).stream()),
        "cudaStreamSynchronize");
#else
  no_cuda(device);
#endif
}

struct DeviceTimer::State {
  c10::Device device;
  std::chrono::steady_clock::time_point host_start;
#ifdef COMERA_WITH_CUDA
  cudaEvent_t begin = nullptr, end = nullptr;
#endif
};

DeviceTimer::DeviceTimer(const c10::Device& device) : state_(new State{device, {}}) {
  if (device.is_cpu()) return;
#ifdef COMERA_WITH_CUDA
  check(cudaEventCreate(&state_->begin), "cudaEventCreate");
  check(cudaEventCreate(&state_->end), "cudaEventCreate");
#else
  no_cuda(device);
#endif
}

DeviceTimer::~DeviceTimer() {
#ifdef COMERA_WITH_CUDA
  if (state_->begin) cudaEventDestroy(state_->begin);
  if (state_->end) cudaEventDestroy(state_->end);
#endif
}

void DeviceTimer::start() {
  if (state_->device.is_cpu()) {
    state_->host_start = std::chrono::steady_clock::now();
    return;
  }
#ifdef COMERA_WITH_CUDA
  check(cudaEventRecord(state_->begin, c10::cuda::getCurrentCUDAStream(index_of(state_->device)).stream()),
        "cudaEventRecord");
#endif
}

double DeviceTimer::stop_ms() {
  if (state_->device.is_cpu())
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - state_->host_start)
        .count();
#ifdef COMERA_WITH_CUDA
  check(cudaEventRecord(state_->end, c10::cuda::getCurrentCUDAStream(index_of(state_->device)).stream()),
        "cudaEventRecord");
  check(cudaEventSynchronize(state_->end), "cudaEventSynchronize");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, state_->begin, state_->end), "cudaEventElapsedTime");
  return ms;
#else
  return 0;
#endif
}

DeviceMemoryPeak::DeviceMemoryPeak(const c10::Device& device) : device_(device) {
  if (device.is_cpu())
    throw Error("DeviceMemoryPeak: the CPU has no caching allocator (use CpuMemoryMeter)");
#ifdef COMERA_WITH_CUDA
  // The caching allocator has no statistics ("Invalid device argument") before the device's
  // first tensor: make one, so a measurement may start before the model is on the device.
  at::empty({1}, at::TensorOptions().device(device));
  synchronize(device);
  c10::cuda::CUDACachingAllocator::resetPeakStats(index_of(device));
  start_ = peak();
#else
  no_cuda(device);
#endif
}

namespace {

DeviceMemoryPeak::Bytes allocator_bytes([[maybe_unused]] const c10::Device& device, [[maybe_unused]] bool peak) {
  DeviceMemoryPeak::Bytes b;
#ifdef COMERA_WITH_CUDA
  synchronize(device);
  const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(index_of(device));
  const auto& allocated = stats.allocated_bytes[0];  // [0]: all pools together
  const auto& reserved = stats.reserved_bytes[0];
  b.allocated = peak ? allocated.peak : allocated.current;
  b.reserved = peak ? reserved.peak : reserved.current;
#endif
  return b;
}

}  // namespace

DeviceMemoryPeak::Bytes DeviceMemoryPeak::peak() const { return allocator_bytes(device_, true); }

DeviceMemoryPeak::Bytes DeviceMemoryPeak::current() const { return allocator_bytes(device_, false); }

std::string device_description(const c10::Device& device) {
  if (device.is_cpu()) {
    // The BLAS kernels are part of the CPU's identity here: they change every dense GEMM's speed.
    const auto blas = blas_kernels();
    return cpu_model() + (blas.core.empty() ? "" : ", OpenBLAS " + blas.core);
  }
#ifdef COMERA_WITH_CUDA
  cudaDeviceProp p{};
  check(cudaGetDeviceProperties(&p, index_of(device)), "cudaGetDeviceProperties");
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  const auto version = [](int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); };
  return std::string(p.name) + " (sm_" + std::to_string(p.major) + std::to_string(p.minor) + ", " +
         std::to_string(p.multiProcessorCount) + " SMs), CUDA driver " + version(driver) + ", runtime " +
         version(runtime);
#else
  no_cuda(device);
#endif
}

}  // namespace comera
