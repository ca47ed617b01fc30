#pragma once
// A contraction order: a binary tree over a set of operands, stored as its pairwise
// contractions in execution order (each step joins two sets that are single operands or
// results of earlier steps). Text form: nested pairs of operand names, "((X,G1),G2)".
#include "core/contract/tensor_network.h"

#include <string>
#include <vector>

namespace comera::contract {

struct Step {
  Mask a = 0, b = 0;
  Mask result() const { return a | b; }
};

class Order {
 public:
  Order() = default;
  // Throws comera::Error unless the steps form one binary tree over `leaves`.
  Order(Mask leaves, std::vector<Step> steps);

  Mask leaves() const { return leaves_; }
  const std::vector<Step>& steps() const { return steps_; }
  // The step producing `node` (an internal node of the tree); throws if there is none.
  const Step& split(Mask node) const;
  bool is_node(Mask node) const;  // a leaf or an internal node of the tree
  // Canonical text: children ordered by their lowest operand, so equal trees print equally.
  std::string str(const TensorNetwork& net) const;
  static Order parse(const std::string& text, const TensorNetwork& net);

  bool operator==(const Order& other) const;
  bool operator!=(const Order& other) const { return !(*this == other); }

 private:
  Mask leaves_ = 0;
  std::vector<Step> steps_;
};

}  // namespace comera::contract
