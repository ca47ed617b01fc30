#pragma once
// A linear layer trained in another form than the dense layer it stands for (low-rank factors,
// LTE's LoRA heads): what size accounting needs to count the dense model beside it.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace comera {

class DenseStandIn {
 public:
  virtual ~DenseStandIn() = default;
  // The parameters of its own form, which the dense layer does not have.
  virtual std::vector<at::Tensor> own_form() const = 0;
  // The dense layer's parameters in their place: in x out where the form replaces W, 0 where
  // W is kept beside it.
  virtual int64_t dense_in_place() const = 0;
};

}  // namespace comera
