#pragma once
// Exhaustive enumeration of contraction orders. Only orders without outer products are valid:
// every step joins two sets that share an index (so every node of the tree is connected).
#include "core/contract/order.h"
#include "core/contract/tensor_network.h"

#include <cstddef>
#include <vector>

namespace comera::contract {

// Number of valid orders over `leaves` (0 when the leaves are not connected).
double count_orders(const TensorNetwork& net, Mask leaves);
// Every valid order over `leaves`; throws comera::Error when there are more than `limit`.
std::vector<Order> enumerate_orders(const TensorNetwork& net, Mask leaves, size_t limit);

// Calls fn(a, b) for every split of the connected set s into two connected parts, each
// unordered split once (a holds the lowest operand of s).
template <typename Fn>
void for_each_split(const TensorNetwork& net, Mask s, Fn&& fn) {
  const Mask low = s & (~s + 1);
  const Mask rest = s & ~low;
  // Walk the subsets of `rest`; a = low | subset, b = the remainder (non-empty).
  for (Mask sub = rest;; sub = (sub - 1) & rest) {
    const Mask a = low | sub, b = s & ~a;
    if (b && net.connected(a) && net.connected(b)) fn(a, b);
    if (!sub) break;
  }
}

}  // namespace comera::contract
