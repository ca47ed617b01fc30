#pragma once
// Runs a contraction plan of a TT layer with matrix multiplications, as one autograd function:
// the forward follows plan.forward, the backward plan.backward (see plan.h). Each pairwise
// contraction is one GEMM on views of its operands; an operand is copied into another layout
// only when no view fits, choosing the cheaper copy and the layout its consumer wants next.
#include "core/contract/plan.h"

#include <ATen/core/Tensor.h>

#include <memory>
#include <vector>

namespace comera::contract {

// y (B, out) from x (B, in) and the 2d cores (r_{k-1}, s_k, r_k), rank vectors already folded
// in. Gradients flow to x and to every core that requires them; nothing is recomputed that
// the forward computed and the backward order shares.
at::Tensor run_plan(const std::shared_ptr<const ContractionPlan>& plan, const at::Tensor& x,
                    const std::vector<at::Tensor>& cores);

// The TT layer by a plan, with merged_path's arguments: the rank vectors as applied (masked;
// empty: none) scale the cores on their left, and the bias (undefined: none) is added, both
// inside the one autograd function, with their gradients computed analytically.
at::Tensor plan_path(const std::shared_ptr<const ContractionPlan>& plan, const at::Tensor& x,
                     const std::vector<at::Tensor>& cores, const std::vector<at::Tensor>& ranks,
                     const at::Tensor& bias);

}  // namespace comera::contract
