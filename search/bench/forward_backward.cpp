#include "search/bench/forward_backward.h"

#include "core/util/memory_meter.h"

#include <ATen/ATen.h>
#include <torch/autograd.h>
#include <torch/nn/module.h>

namespace comera {

ForwardBackwardResult measure_forward_backward(const std::vector<torch::nn::Module*>& modules,
                                               const std::function<at::Tensor()>& forward,
                                               const at::Tensor& grad, int warmup, int repeats) {
  auto clear_grads = [&modules] {
    for (auto* module : modules)
      for (auto& p : module->parameters()) p.mutable_grad() = at::Tensor();
  };
  ForwardBackwardResult out;
  {
    clear_grads();
    CpuMemoryMeter meter;
    at::Tensor y = forward();
    out.held_bytes = meter.live_extra_bytes();
    y.backward(grad);
    out.peak_bytes = meter.peak_extra_bytes();
  }
  out.time = time_median(
      [&](int) {
        clear_grads();
        forward().backward(grad);
      },
      warmup, repeats);
  return out;
}

}  // namespace comera
