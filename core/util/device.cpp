#include "core/util/device.h"

#include "core/util/error.h"

#include <torch/cuda.h>

namespace comera {

c10::Device parse_device(const std::string& text, const std::string& where) {
  try {
    const c10::Device device(text);
    if (device.is_cpu() || device.is_cuda()) return device;
  } catch (const std::exception&) {
  }
  throw Error(where + ": '" + text + "' is not a device (write cpu, cuda or cuda:N)");
}

void require_device(const c10::Device& device) {
  if (device.is_cpu()) return;
  const auto gpus = static_cast<int64_t>(torch::cuda::device_count());
  if (gpus == 0)
    throw Error("device " + device.str() + ": this LibTorch build or machine has no CUDA device "
                "(run with --device cpu, or build against a CUDA LibTorch)");
  if (device.has_index() && device.index() >= gpus)
    throw Error("device " + device.str() + ": this machine has " + std::to_string(gpus) +
                " CUDA device(s) (use cuda:0 .. cuda:" + std::to_string(gpus - 1) + ")");
}

}  // namespace comera
