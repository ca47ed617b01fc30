#pragma once
// Ranking of contraction orders by the cost of the plan that uses them both ways (forward and
// reverse mode): exhaustive for small networks, dynamic programming over connected subsets
// (exact, keeping the k best per subset) where enumeration is too large.
#include "core/contract/cost_model.h"
#include "core/contract/order.h"
#include "core/contract/tensor_network.h"

#include <cstddef>
#include <vector>

namespace comera::contract {

// What an order is scored by: the plan using it both ways (consistent_cost), or its forward
// alone (forward_cost; for plans whose backward follows another order).
enum class Objective { Plan, Forward };

// consistent_cost or forward_cost, as the objective says.
Cost objective_cost(const TensorNetwork& net, const Order& order, Objective objective);

struct RankedOrder {
  Order order;
  Cost cost;  // consistent_cost or forward_cost of the order
  double score = 0;
};

// The k lowest-scoring valid orders over `leaves`, best first. Exact for every weighting: a
// weight on the peak (not additive) is handled by solving once per peak bound.
std::vector<RankedOrder> best_orders(const TensorNetwork& net, Mask leaves, const CostWeights& w,
                                     int k, Objective objective = Objective::Plan);
// The same by scoring every order, when there are at most `limit` of them.
std::vector<RankedOrder> exhaustive_orders(const TensorNetwork& net, Mask leaves,
                                           const CostWeights& w, int k, size_t limit,
                                           Objective objective = Objective::Plan);
// Exhaustive when the orders number at most `limit`, else dynamic programming.
std::vector<RankedOrder> rank_orders(const TensorNetwork& net, Mask leaves, const CostWeights& w,
                                     int k, Objective objective = Objective::Plan,
                                     size_t limit = 20000);

}  // namespace comera::contract
