#include "search/tuner/candidates.h"

#include "core/contract/named_paths.h"
#include "core/contract/optimal_order.h"
#include "core/contract/tt_network.h"
#include "core/util/error.h"

#include <algorithm>

namespace comera::tuner {

using namespace contract;

namespace {

// Dense forward + backward: Y = X·W, dX = dY·Wᵀ, dW = Xᵀ·dY.
Cost dense_cost(const TTShape& shape, int64_t tokens) {
  const double b = static_cast<double>(tokens), in = static_cast<double>(shape.in_features()),
               out = static_cast<double>(shape.out_features());
  return {3 * b * in * out, b * out + b * in + in * out, 0, std::max({b * out, b * in, in * out})};
}

}  // namespace

std::vector<Candidate> make_candidates(const TTShape& shape, int64_t tokens,
                                       const CandidateOptions& options) {
  const TTNetwork tt(shape, tokens);
  const auto& net = tt.net();
  const auto& w = options.weights;
  std::vector<Candidate> out;
  std::vector<std::string> seen;  // plan texts; the merged tree's stands for the layer's own
  auto add = [&](const ContractionPlan& plan, bool own_plan) {
    const std::string text = plan.str(net);
    if (std::find(seen.begin(), seen.end(), text) != seen.end()) return;
    seen.push_back(text);
    const Cost cost = plan_cost(net, plan);
    out.push_back({plan.name, own_plan ? text : kMerged,
                   own_plan ? std::make_shared<const ContractionPlan>(plan) : nullptr, cost,
                   w.score(cost), false});
  };
  add(ContractionPlan(kMerged, merged_order(tt)), false);
  add(ContractionPlan("core-by-core", core_by_core_order(tt)), true);
  add(ContractionPlan("reconstruct", reconstruct_order(tt)), true);

  const auto both = rank_orders(net, tt.forward_leaves(), w, options.top_k, Objective::Plan);
  for (const auto& r : both) add(ContractionPlan("ranked", r.order), true);
  if (options.mixed > 0) {
    // The best forward orders with the best backward ones, scored with recomputation.
    const auto fwd = rank_orders(net, tt.forward_leaves(), w, options.top_k, Objective::Forward);
    std::vector<std::pair<double, ContractionPlan>> mixes;
    for (const auto& f : fwd)
      for (const auto& b : both)
        if (f.order != b.order) {
          ContractionPlan p("mixed", f.order, b.order);
          mixes.emplace_back(w.score(plan_cost(net, p)), std::move(p));
        }
    std::stable_sort(mixes.begin(), mixes.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    for (int i = 0; i < options.mixed && i < static_cast<int>(mixes.size()); ++i)
      add(mixes[i].second, true);
  }
  const Cost dense = dense_cost(shape, tokens);
  out.push_back({kDense, kDense, nullptr, dense, w.score(dense), true});
  return out;
}

std::shared_ptr<const ContractionPlan> plan_from_choice(const std::string& text, int d) {
  if (text == kMerged) return nullptr;
  if (text == kDense)
    throw Error("kernel choice 'dense' is a reference, not a plan for a TT layer");
  const std::vector<int64_t> ones(d, 1);
  const TTNetwork tt(TTShape(ones, ones, std::vector<int64_t>(2 * d + 1, 1)), 1);
  return std::make_shared<const ContractionPlan>(ContractionPlan::parse(text, tt.net(), "tuned"));
}

}  // namespace comera::tuner
