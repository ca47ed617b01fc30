#include "core/contract/optimal_order.h"

#include "core/contract/enumeration.h"
#include "core/util/error.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <unordered_map>

namespace comera::contract {

namespace {

struct Entry {
  double score = 0;  // additive part (peak excluded)
  Cost cost;
  Mask a = 0, b = 0;  // split; 0 for a leaf
  int ia = 0, ib = 0;
};

using Table = std::unordered_map<Mask, std::vector<Entry>>;

Cost node(const TensorNetwork& net, Mask a, Mask b, Objective objective) {
  return objective == Objective::Plan ? node_cost(net, a, b) : step_cost(net, a, b);
}

std::vector<Mask> connected_subsets(const TensorNetwork& net, Mask leaves) {
  std::vector<Mask> out;
  for (Mask s = leaves; s; s = (s - 1) & leaves)
    if (net.connected(s)) out.push_back(s);
  std::sort(out.begin(), out.end(), [](Mask x, Mask y) {
    return popcount(x) != popcount(y) ? popcount(x) < popcount(y) : x < y;
  });
  return out;
}

// k best trees per subset whose every node has node_cost peak <= cap.
Table solve(const TensorNetwork& net, const std::vector<Mask>& subsets, const CostWeights& additive,
            int k, double cap, Objective objective) {
  Table t;
  for (Mask s : subsets) {
    std::vector<Entry>& out = t[s];
    if (popcount(s) == 1) {
      out.push_back({});
      continue;
    }
    for_each_split(net, s, [&](Mask a, Mask b) {
      const Cost nc = node(net, a, b, objective);
      if (nc.peak > cap) return;
      const auto& ea = t.at(a);
      const auto& eb = t.at(b);
      const double ns = additive.score(nc);
      for (int i = 0; i < static_cast<int>(ea.size()); ++i)
        for (int j = 0; j < static_cast<int>(eb.size()); ++j) {
          Entry e{ea[i].score + eb[j].score + ns, ea[i].cost, a, b, i, j};
          e.cost += eb[j].cost;
          e.cost += nc;
          out.push_back(e);
        }
    });
    const auto by_score = [](const Entry& x, const Entry& y) { return x.score < y.score; };
    if (static_cast<int>(out.size()) > k) {
      std::nth_element(out.begin(), out.begin() + k, out.end(), by_score);
      out.resize(k);
    }
    std::sort(out.begin(), out.end(), by_score);
  }
  return t;
}

Order build(const Table& t, Mask root, int index) {
  std::vector<Step> steps;
  std::function<void(Mask, int)> rec = [&](Mask s, int i) {
    const Entry& e = t.at(s)[i];
    if (!e.a) return;
    rec(e.a, e.ia);
    rec(e.b, e.ib);
    steps.push_back({e.a, e.b});
  };
  rec(root, index);
  return Order(root, steps);
}

void sort_ranked(std::vector<RankedOrder>& v) {
  std::stable_sort(v.begin(), v.end(),
                   [](const RankedOrder& x, const RankedOrder& y) { return x.score < y.score; });
}

}  // namespace

Cost objective_cost(const TensorNetwork& net, const Order& order, Objective objective) {
  return objective == Objective::Plan ? consistent_cost(net, order) : forward_cost(net, order);
}

std::vector<RankedOrder> best_orders(const TensorNetwork& net, Mask leaves, const CostWeights& w,
                                     int k, Objective objective) {
  if (k < 1) throw Error("best_orders: k = " + std::to_string(k) + " must be >= 1");
  if (!net.connected(leaves)) throw Error("best_orders: the operands are not connected");
  const auto subsets = connected_subsets(net, leaves);
  CostWeights additive = w;
  additive.peak = 0;
  std::vector<double> caps{std::numeric_limits<double>::infinity()};
  if (w.peak != 0) {
    caps.clear();
    for (Mask s : subsets)
      if (popcount(s) > 1)
        for_each_split(net, s, [&](Mask a, Mask b) { caps.push_back(node(net, a, b, objective).peak); });
    std::sort(caps.begin(), caps.end());
    caps.erase(std::unique(caps.begin(), caps.end()), caps.end());
  }
  std::vector<RankedOrder> best;
  for (double cap : caps) {
    // Every tree found from here on has peak >= cap: stop once that alone loses.
    if (static_cast<int>(best.size()) >= k && w.peak * cap >= best[k - 1].score) break;
    const Table t = solve(net, subsets, additive, k, cap, objective);
    const auto& top = t.at(leaves);
    for (int i = 0; i < static_cast<int>(top.size()); ++i) {
      RankedOrder r{build(t, leaves, i), top[i].cost, w.score(top[i].cost)};
      if (std::none_of(best.begin(), best.end(), [&](const RankedOrder& x) { return x.order == r.order; }))
        best.push_back(std::move(r));
    }
    sort_ranked(best);
    if (static_cast<int>(best.size()) > k) best.resize(k);
  }
  return best;
}

std::vector<RankedOrder> exhaustive_orders(const TensorNetwork& net, Mask leaves,
                                           const CostWeights& w, int k, size_t limit,
                                           Objective objective) {
  std::vector<RankedOrder> all;
  for (auto& order : enumerate_orders(net, leaves, limit)) {
    const Cost c = objective_cost(net, order, objective);
    all.push_back({std::move(order), c, w.score(c)});
  }
  sort_ranked(all);
  if (static_cast<int>(all.size()) > k) all.resize(k);
  return all;
}

std::vector<RankedOrder> rank_orders(const TensorNetwork& net, Mask leaves, const CostWeights& w,
                                     int k, Objective objective, size_t limit) {
  if (count_orders(net, leaves) <= static_cast<double>(limit))
    return exhaustive_orders(net, leaves, w, k, limit, objective);
  return best_orders(net, leaves, w, k, objective);
}

}  // namespace comera::contract
