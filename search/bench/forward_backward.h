#pragma once
// One lookup-style measurement shared by the benchmarks: forward then backward of a given upstream
// gradient, its tensor memory once (CPU tensors, or the GPU's caching allocator) and its time
// over repeats, gradients reset before each.
#include "core/util/timing.h"

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace torch::nn {
class Module;
}

namespace comera {

struct ForwardBackwardResult {
  Timing time;
  // Tensor bytes above the step's start: held after forward (output and what backward keeps),
  // and the peak over forward and backward.
  int64_t held_bytes = 0, peak_bytes = 0;
};

ForwardBackwardResult measure_forward_backward(const std::vector<torch::nn::Module*>& modules,
                                               const std::function<at::Tensor()>& forward,
                                               const at::Tensor& grad, int warmup, int repeats,
                                               const c10::Device& device = c10::Device(c10::kCPU));

}  // namespace comera
