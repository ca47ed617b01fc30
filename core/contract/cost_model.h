#pragma once
// Cost model of contraction orders and plans: multiply-adds, elements written, elements the
// backward must keep, and the largest tensor produced; a weighted score ranks them.
#include "core/contract/order.h"
#include "core/contract/plan.h"
#include "core/contract/tensor_network.h"

#include <string>

namespace comera::contract {

struct Cost {
  double macs = 0;     // multiply-adds
  double written = 0;  // elements of every tensor produced (intermediates, Y, gradients)
  double saved = 0;    // elements of forward intermediates kept for the backward
  double peak = 0;     // elements of the largest tensor produced
  Cost& operator+=(const Cost& o);  // sums, except peak (max)
};

// score = macs·macs + written·written + saved·saved + peak·peak. The default prices an
// element written like 8 multiply-adds: on CPUs a GEMM retires roughly that many per element
// a memory-bound copy moves.
struct CostWeights {
  double macs = 1, written = 8, saved = 0, peak = 0;
  double score(const Cost& c) const;
  std::string str() const;
  // "macs=1,written=8,saved=0,peak=0" (any subset, in any order).
  static CostWeights parse(const std::string& text);
};

// One pairwise contraction of disjoint sets a and b.
Cost step_cost(const TensorNetwork& net, Mask a, Mask b);
// The forward alone: the sum of step_cost over the order's steps.
Cost forward_cost(const TensorNetwork& net, const Order& order);
// What node (a, b) of a tree adds to the plan that uses the tree both ways: the forward
// contraction, and the two backward contractions that pass the gradient of a|b on to a and b
// (each has the same multiply-adds as the forward one).
Cost node_cost(const TensorNetwork& net, Mask a, Mask b);
// The sum of node_cost over the tree: the cost of ContractionPlan(name, order).
Cost consistent_cost(const TensorNetwork& net, const Order& order);
// Forward and backward of a plan, every operand needing its gradient; shared results are
// counted once, forward results the backward uses count as saved, others are recomputed.
Cost plan_cost(const TensorNetwork& net, const ContractionPlan& plan);

}  // namespace comera::contract
