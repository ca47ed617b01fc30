#include "core/contract/enumeration.h"

#include "core/util/error.h"

#include <unordered_map>

namespace comera::contract {

namespace {

double count(const TensorNetwork& net, Mask s, std::unordered_map<Mask, double>& memo) {
  if (popcount(s) == 1) return 1;
  auto it = memo.find(s);
  if (it != memo.end()) return it->second;
  double n = 0;
  for_each_split(net, s, [&](Mask a, Mask b) { n += count(net, a, memo) * count(net, b, memo); });
  return memo[s] = n;
}

using Trees = std::vector<std::vector<Step>>;

const Trees& trees(const TensorNetwork& net, Mask s, std::unordered_map<Mask, Trees>& memo) {
  auto it = memo.find(s);
  if (it != memo.end()) return it->second;
  Trees out;
  if (popcount(s) == 1) {
    out.emplace_back();
  } else {
    for_each_split(net, s, [&](Mask a, Mask b) {
      const Trees& ta = trees(net, a, memo);
      const Trees& tb = trees(net, b, memo);
      for (const auto& x : ta)
        for (const auto& y : tb) {
          std::vector<Step> steps(x);
          steps.insert(steps.end(), y.begin(), y.end());
          steps.push_back({a, b});
          out.push_back(std::move(steps));
        }
    });
  }
  return memo[s] = std::move(out);
}

}  // namespace

double count_orders(const TensorNetwork& net, Mask leaves) {
  if (!net.connected(leaves)) return 0;
  std::unordered_map<Mask, double> memo;
  return count(net, leaves, memo);
}

std::vector<Order> enumerate_orders(const TensorNetwork& net, Mask leaves, size_t limit) {
  const double n = count_orders(net, leaves);
  if (n > static_cast<double>(limit))
    throw Error("enumerating contraction orders: " + std::to_string(static_cast<long long>(n)) +
                " orders exceed the limit of " + std::to_string(limit) +
                "; use the dynamic-programming search (best_orders) instead");
  std::unordered_map<Mask, Trees> memo;
  std::vector<Order> out;
  for (const auto& steps : trees(net, leaves, memo)) out.emplace_back(leaves, steps);
  return out;
}

}  // namespace comera::contract
