#pragma once
// A contraction plan for a TT layer: the order that computes Y, and the order whose reverse
// mode computes the gradients (dY enters at its root and is passed down to every operand).
// When the two differ, the backward reuses whatever forward results the two orders share
// and recomputes the rest.
#include "core/contract/order.h"
#include "core/contract/tensor_network.h"

#include <string>

namespace comera::contract {

struct ContractionPlan {
  std::string name;  // "merged", "core-by-core", "reconstruct", "ranked", "mixed"
  Order forward;
  Order backward;

  ContractionPlan() = default;
  ContractionPlan(std::string name, Order forward, Order backward);
  ContractionPlan(std::string name, const Order& both) : ContractionPlan(std::move(name), both, both) {}

  bool consistent() const { return forward == backward; }
  // The forward order's text, then ";" and the backward order's when they differ.
  std::string str(const TensorNetwork& net) const;
  static ContractionPlan parse(const std::string& text, const TensorNetwork& net,
                               const std::string& name);
  // The one operand neither order covers (dY): its indices are the forward's output.
  int output_operand(const TensorNetwork& net) const;
};

}  // namespace comera::contract
