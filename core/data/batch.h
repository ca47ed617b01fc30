#pragma once
// A batch as every task's data produces it: named tensors (pair text: input_ids, segment_ids,
// attention_mask, labels; click logs: dense features, bag indices and offsets, labels) with the
// number of examples, so the trainer can move and count batches without knowing what they hold.
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace comera {

class Batch {
 public:
  Batch() = default;
  explicit Batch(int64_t examples) : examples_(examples) {}

  int64_t examples() const { return examples_; }
  // Adds or replaces a tensor.
  void set(const std::string& name, at::Tensor tensor);
  bool has(const std::string& name) const;
  // Throws comera::Error naming the missing tensor and the ones present.
  const at::Tensor& at(const std::string& name) const;
  const std::vector<std::pair<std::string, at::Tensor>>& tensors() const { return tensors_; }

  // Every tensor on `device` (copies issued without waiting where the source is pinned memory).
  Batch to(const c10::Device& device) const;

 private:
  int64_t examples_ = 0;
  std::vector<std::pair<std::string, at::Tensor>> tensors_;
};

}  // namespace comera
