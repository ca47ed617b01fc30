#pragma once
// The CPU kernel of dropout_mask.h: applies a mask in one parallel pass, drawing it chunk by
// chunk with DropoutMask::multipliers so that no mask tensor is made.
#include "core/kernels/dropout_mask.h"

#include <ATen/core/Tensor.h>

namespace comera::cpu {

// Whether apply_mask takes t (CPU, float or double).
bool maskable(const at::Tensor& t);

// x + mask ⊙ f, or mask ⊙ f when x is undefined (maskable tensors, x and f of one shape),
// as a new contiguous tensor, in parallel. Element i is element i of f's contiguous layout.
at::Tensor apply_mask(const DropoutMask& mask, const at::Tensor& f, const at::Tensor& x = {});

}  // namespace comera::cpu
