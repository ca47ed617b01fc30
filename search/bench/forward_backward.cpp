#include "search/bench/forward_backward.h"

#include "core/util/accelerator.h"
#include "core/util/memory_meter.h"

#include <ATen/ATen.h>
#include <torch/autograd.h>
#include <torch/nn/module.h>

namespace comera {

ForwardBackwardResult measure_forward_backward(const std::vector<torch::nn::Module*>& modules,
                                               const std::function<at::Tensor()>& forward,
                                               const at::Tensor& grad, int warmup, int repeats,
                                               const c10::Device& device) {
  auto clear_grads = [&modules] {
    for (auto* module : modules)
      for (auto& p : module->parameters()) p.mutable_grad() = at::Tensor();
  };
  ForwardBackwardResult out;
  clear_grads();
  if (device.is_cpu()) {
    CpuMemoryMeter meter;
    at::Tensor y = forward();
    out.held_bytes = meter.live_extra_bytes();
    y.backward(grad);
    out.peak_bytes = meter.peak_extra_bytes();
  } else {
    const DeviceMemoryPeak meter(device);
    at::Tensor y = forward();
    out.held_bytes = meter.current().allocated - meter.at_start().allocated;
    y.backward(grad);
    out.peak_bytes = meter.peak().allocated - meter.at_start().allocated;
  }
  out.time = time_median(
      [&](int) {
        clear_grads();
        forward().backward(grad);
      },
      warmup, repeats, device);
  return out;
}

}  // namespace comera
