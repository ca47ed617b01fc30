#include "core/data/batch.h"

#include "core/util/error.h"

#include <ATen/ATen.h>

namespace comera {

void Batch::set(const std::string& name, at::Tensor tensor) {
  for (auto& [key, value] : tensors_)
    if (key == name) {
      value = std::move(tensor);
      return;
    }
  tensors_.emplace_back(name, std::move(tensor));
}

bool Batch::has(const std::string& name) const {
  for (const auto& item : tensors_)
    if (item.first == name) return true;
  return false;
}

const at::Tensor& Batch::at(const std::string& name) const {
  for (const auto& item : tensors_)
    if (item.first == name) return item.second;
  std::string present;
  for (const auto& item : tensors_) present += (present.empty() ? "" : ", ") + item.first;
  throw Error("the batch has no tensor '" + name + "' (it has: " + present +
              "); the data does not fit the task (check training.task and the data section)");
}

Batch Batch::to(const c10::Device& device) const {
  Batch out(examples_);
  for (const auto& [name, tensor] : tensors_)
    out.tensors_.emplace_back(name, tensor.device() == device ? tensor
                                                              : tensor.to(device, /*non_blocking=*/true));
  return out;
}

}  // namespace comera
