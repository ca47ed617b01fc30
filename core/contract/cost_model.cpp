#include "core/contract/cost_model.h"

#include "core/util/comma_list.h"
#include "core/util/error.h"

#include <algorithm>
#include <functional>
#include <set>
#include <sstream>

namespace comera::contract {

Cost& Cost::operator+=(const Cost& o) {
  macs += o.macs;
  written += o.written;
  saved += o.saved;
  peak = std::max(peak, o.peak);
  return *this;
}

double CostWeights::score(const Cost& c) const {
  return macs * c.macs + written * c.written + saved * c.saved + peak * c.peak;
}

std::string CostWeights::str() const {
  std::ostringstream os;
  os << "macs=" << macs << ",written=" << written << ",saved=" << saved << ",peak=" << peak;
  return os.str();
}

CostWeights CostWeights::parse(const std::string& text) {
  CostWeights w;
  for (const auto& item : split_list(text, "cost weights")) {
    const auto eq = item.find('=');
    const std::string key = item.substr(0, eq);
    double* slot = key == "macs" ? &w.macs : key == "written" ? &w.written
                 : key == "saved" ? &w.saved : key == "peak" ? &w.peak : nullptr;
    if (!slot || eq == std::string::npos)
      throw Error("cost weights '" + text + "': bad item '" + item +
                  "' (use macs=..,written=..,saved=..,peak=..)");
    try {
      *slot = std::stod(item.substr(eq + 1));
    } catch (const std::exception&) {
      throw Error("cost weights '" + text + "': '" + item + "' has no number after '='");
    }
  }
  return w;
}

Cost step_cost(const TensorNetwork& net, Mask a, Mask b) {
  const double out = net.size(a | b);
  return {net.macs(a, b), out, 0, out};
}

Cost forward_cost(const TensorNetwork& net, const Order& order) {
  Cost c;
  for (const Step& s : order.steps()) c += step_cost(net, s.a, s.b);
  return c;
}

Cost node_cost(const TensorNetwork& net, Mask a, Mask b) {
  Cost c = step_cost(net, a, b);
  const double m = c.macs, sa = net.size(a), sb = net.size(b);
  c.macs += 2 * m;
  c.written += sa + sb;
  c.saved = (popcount(a) > 1 ? sa : 0) + (popcount(b) > 1 ? sb : 0);
  c.peak = std::max({c.peak, sa, sb});
  return c;
}

Cost consistent_cost(const TensorNetwork& net, const Order& order) {
  Cost c;
  for (const Step& s : order.steps()) c += node_cost(net, s.a, s.b);
  return c;
}

Cost plan_cost(const TensorNetwork& net, const ContractionPlan& plan) {
  const Mask all = net.all();
  Cost c = forward_cost(net, plan.forward);
  std::set<Mask> forward_results, kept, recomputed;
  for (const Step& s : plan.forward.steps()) forward_results.insert(s.result());
  // The value of a backward-order node, from the forward when it computed it.
  std::function<void(Mask)> value = [&](Mask m) {
    if (popcount(m) == 1) return;
    if (forward_results.count(m)) {
      if (kept.insert(m).second) c.saved += net.size(m);
      return;
    }
    if (!recomputed.insert(m).second) return;
    const Step& s = plan.backward.split(m);
    value(s.a);
    value(s.b);
    c += step_cost(net, s.a, s.b);
  };
  // The gradient of node n (the contraction of everything outside n) is passed to its children.
  std::function<void(Mask)> gradient = [&](Mask n) {
    if (popcount(n) == 1) return;
    const Step& s = plan.backward.split(n);
    for (const auto& [child, sibling] : {std::make_pair(s.a, s.b), std::make_pair(s.b, s.a)}) {
      value(sibling);
      c += step_cost(net, all & ~n, sibling);
      gradient(child);
    }
  };
  gradient(plan.backward.leaves());
  return c;
}

}  // namespace comera::contract
