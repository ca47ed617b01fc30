// Cost model against hand counts, and the dynamic-programming ranking against exhaustive
// enumeration of the same cost model.
#include "core/contract/cost_model.h"
#include "core/contract/enumeration.h"
#include "core/contract/named_paths.h"
#include "core/contract/optimal_order.h"
#include "core/contract/tt_network.h"
#include "core/util/error.h"
#include "tests/support/catch.h"

#include <random>

using namespace comera;
using namespace comera::contract;
using Catch::Matchers::Contains;

TEST_CASE("merged-path MACs per token match the paper's hand counts", "[contract_cost]") {
  const TTShape attn({12, 8, 8}, {8, 8, 12}, {1, 12, 30, 30, 30, 12, 1});
  const TTShape ffn({12, 8, 8}, {12, 16, 16}, {1, 12, 30, 30, 30, 16, 1});
  auto per_token = [](const TTShape& s, Order (*make)(const TTNetwork&)) {
    const TTNetwork one(s, 1), two(s, 2);
    return forward_cost(two.net(), make(two)).macs - forward_cost(one.net(), make(one)).macs;
  };
  CHECK(per_token(attn, merged_order) == 46080);   // 30 * (768 + 768)
  CHECK(per_token(ffn, merged_order) == 115200);   // 30 * (768 + 3072)
  CHECK(per_token(attn, reconstruct_order) == 589824);    // 768 * 768, dense
  CHECK(per_token(ffn, reconstruct_order) == 2359296);    // 768 * 3072
  // Batch-free merges of 768->768: G1·G2 12*12*8*30, then *G3 96*30*8*30; R the same mirrored.
  const TTNetwork tt(attn, 4096);
  CHECK(forward_cost(tt.net(), merged_order(tt)).macs == 2 * (34560 + 691200) + 4096.0 * 46080);
  // Consistent plans do every forward multiply-add twice more in the backward.
  for (auto make : {merged_order, core_by_core_order, reconstruct_order}) {
    const Order o = make(tt);
    CHECK(plan_cost(tt.net(), ContractionPlan("p", o)).macs == 3 * forward_cost(tt.net(), o).macs);
  }
}

TEST_CASE("plan cost of a mixed plan by hand (d = 1)", "[contract_cost]") {
  // X (b=2, i=3), G1 (i, r=3), G2 (r, j=5), dY (b, j).
  const TTNetwork tt(TTShape({3}, {5}, {1, 3, 1}), 2);
  const auto& net = tt.net();
  const ContractionPlan plan = ContractionPlan::parse("((X,G1),G2);(X,(G1,G2))", net, "mixed");
  const Cost c = plan_cost(net, plan);
  // Forward X·G1 (18 MACs, 6 written), ·G2 (30, 10). Backward recomputes W = G1·G2 (45, 15),
  // dX = dY·W (30, 6), dW = dY·X (30, 15), dG1 = dW·G2 (45, 9), dG2 = dW·G1 (45, 15).
  CHECK(c.macs == 18 + 30 + 45 + 30 + 30 + 45 + 45);
  CHECK(c.written == 6 + 10 + 15 + 6 + 15 + 9 + 15);
  CHECK(c.saved == 0);
  CHECK(c.peak == 15);
  const Cost same = plan_cost(net, ContractionPlan("p", Order::parse("((X,G1),G2)", net)));
  CHECK(same.saved == 6);  // X·G1 kept for dG2
}

TEST_CASE("orders print and parse canonically", "[contract_cost]") {
  const TTNetwork tt(TTShape({2, 2}, {2, 2}, {1, 2, 2, 2, 1}), 3);
  const Order o = Order::parse("((G4,((G2 , G1),X)),G3)", tt.net());
  CHECK(o.str(tt.net()) == "(((X,(G1,G2)),G4),G3)");
  CHECK(Order::parse(o.str(tt.net()), tt.net()) == o);
  CHECK(merged_order(tt).str(tt.net()) == "((X,(G1,G2)),(G3,G4))");
  CHECK(core_by_core_order(tt).str(tt.net()) == "((((X,G1),G2),G3),G4)");
  CHECK(reconstruct_order(tt).str(tt.net()) == "(X,((G1,G2),(G3,G4)))");
  CHECK_THROWS_WITH(Order::parse("((X,G1),G9)", tt.net()), Contains("no operand 'G9'"));
  CHECK_THROWS_WITH(Order::parse("((X,G1),X)", tt.net()), Contains("appears twice"));
  CHECK_THROWS_WITH(Order(tt.forward_leaves(), {{bit(0), bit(1)}}), Contains("one tree over all operands"));
  CHECK_THROWS_WITH(CostWeights::parse("macs=1,flops=2"), Contains("bad item 'flops=2'"));
  CHECK(CostWeights::parse("peak=2,macs=3").score({1, 1, 1, 1}) == 3 + 8 + 0 + 2);
}

TEST_CASE("dynamic programming equals the exhaustive optimum", "[contract_cost]") {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int64_t> mode(1, 6), rank(1, 8), tokens(1, 64);
  std::uniform_real_distribution<double> weight(0, 4);
  for (int d = 1; d <= 4; ++d)
    for (int trial = 0; trial < (d < 4 ? 6 : 2); ++trial) {
      std::vector<int64_t> in, out;
      for (int k = 0; k < d; ++k) in.push_back(mode(rng)), out.push_back(mode(rng));
      std::vector<int64_t> sizes(in);
      sizes.insert(sizes.end(), out.begin(), out.end());
      auto ranks = capped_uniform_ranks(sizes, rank(rng));
      const TTNetwork tt(TTShape(in, out, ranks), tokens(rng));
      CostWeights w;
      if (trial % 2) w = CostWeights{weight(rng), weight(rng), weight(rng), weight(rng)};
      INFO(TTShape(in, out, ranks).str() << " B=" << tt.tokens() << " weights " << w.str());
      for (Mask leaves : {tt.forward_leaves(), tt.gradient_leaves(1)})
        for (auto objective : {Objective::Plan, Objective::Forward}) {
          const auto dp = best_orders(tt.net(), leaves, w, 5, objective);
          const auto ex = exhaustive_orders(tt.net(), leaves, w, 5, 100000, objective);
          REQUIRE(dp.size() == ex.size());
          for (size_t i = 0; i < dp.size(); ++i) {
            CHECK(dp[i].score == Approx(ex[i].score).epsilon(1e-12));
            CHECK(w.score(objective_cost(tt.net(), dp[i].order, objective)) ==
                  Approx(dp[i].score).epsilon(1e-12));
          }
        }
    }
}

TEST_CASE("consistent plan cost is the sum of node costs for every order", "[contract_cost]") {
  const TTNetwork tt(TTShape({2, 3, 2}, {3, 2, 2}, {1, 2, 3, 4, 3, 2, 1}), 5);
  for (const auto& o : enumerate_orders(tt.net(), tt.forward_leaves(), 1000)) {
    const Cost a = plan_cost(tt.net(), ContractionPlan("p", o)), b = consistent_cost(tt.net(), o);
    CHECK(a.macs == b.macs);
    CHECK(a.written == b.written);
    CHECK(a.saved == b.saved);
    CHECK(a.peak == b.peak);
  }
}
