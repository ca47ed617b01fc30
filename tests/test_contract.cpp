// Contraction-path engine: every order and plan against a dense float64 reference, the
// dynamic programming against exhaustive enumeration, and MAC counts against hand counts.
#include "core/contract/cost_model.h"
#include "core/contract/enumeration.h"
#include "core/contract/executor.h"
#include "core/contract/named_paths.h"
#include "core/contract/optimal_order.h"
#include "core/contract/tt_network.h"
#include "core/layers/tt_linear.h"
#include "core/util/error.h"
#include "tests/support/catch.h"

#include <ATen/ATen.h>
#include <torch/autograd.h>

#include <random>

using namespace comera;
using namespace comera::contract;
using Catch::Matchers::Contains;

namespace {

// A random TT shape with modes 1..3 and ranks within their full-rank bounds.
TTShape random_shape(int d, std::mt19937& rng) {
  std::uniform_int_distribution<int64_t> mode(1, 3), rank(1, 4);
  std::vector<int64_t> in, out, sizes;
  for (int k = 0; k < d; ++k) in.push_back(mode(rng));
  for (int k = 0; k < d; ++k) out.push_back(mode(rng));
  sizes = in;
  sizes.insert(sizes.end(), out.begin(), out.end());
  std::vector<int64_t> ranks{1};
  for (int k = 1; k < 2 * d; ++k) ranks.push_back(rank(rng));
  ranks.push_back(1);
  const CoreChain bounds(sizes, std::vector<int64_t>(2 * d + 1, 1), "test");
  for (int k = 1; k < 2 * d; ++k) ranks[k] = std::min(ranks[k], bounds.max_rank(k));
  return TTShape(in, out, ranks);
}

std::vector<at::Tensor> random_cores(const TTShape& s) {
  std::vector<at::Tensor> cores;
  for (int k = 0; k < 2 * s.d(); ++k)
    cores.push_back(at::randn({s.ranks()[k], s.mode(k), s.ranks()[k + 1]}, at::kDouble));
  return cores;
}

// W (in, out) by merging the cores left to right with plain reshapes: independent of the engine.
at::Tensor dense_weight(const std::vector<at::Tensor>& cores, int64_t in, int64_t out) {
  at::Tensor m = cores[0].reshape({-1, cores[0].size(2)});
  for (size_t k = 1; k < cores.size(); ++k)
    m = at::mm(m, cores[k].reshape({cores[k].size(0), -1})).reshape({-1, cores[k].size(2)});
  return m.reshape({in, out});
}

struct Result {
  at::Tensor y, dx;
  std::vector<at::Tensor> dcores;
};

// y and the gradients of sum(y * probe) with respect to x and every core.
template <typename Fn>
Result run(Fn&& forward, const at::Tensor& x, const std::vector<at::Tensor>& cores,
           const at::Tensor& probe) {
  torch::autograd::variable_list inputs{x.detach().requires_grad_()};
  for (const auto& c : cores) inputs.push_back(c.detach().requires_grad_());
  const std::vector<at::Tensor> core_inputs(inputs.begin() + 1, inputs.end());
  Result r;
  r.y = forward(inputs[0], core_inputs);
  auto grads = torch::autograd::grad({(r.y * probe).sum()}, inputs);
  r.dx = grads[0];
  r.dcores.assign(grads.begin() + 1, grads.end());
  return r;
}

void check_close(const Result& got, const Result& want) {
  CHECK(at::allclose(got.y, want.y, 1e-9, 1e-9));
  CHECK(at::allclose(got.dx, want.dx, 1e-9, 1e-9));
  for (size_t k = 0; k < want.dcores.size(); ++k) CHECK(at::allclose(got.dcores[k], want.dcores[k], 1e-9, 1e-9));
}

}  // namespace

TEST_CASE("every order and mixed plan matches the dense float64 reference", "[contract]") {
  std::mt19937 rng(7);
  for (int d = 1; d <= 4; ++d)
    for (int trial = 0; trial < (d < 4 ? 3 : 1); ++trial) {
      const TTShape shape = random_shape(d, rng);
      const int64_t tokens = std::uniform_int_distribution<int64_t>(1, 5)(rng);
      const TTNetwork tt(shape, tokens);
      const auto cores = random_cores(shape);
      const at::Tensor x = at::randn({tokens, shape.in_features()}, at::kDouble);
      const at::Tensor probe = at::randn({tokens, shape.out_features()}, at::kDouble);
      const Result want = run(
          [&](const at::Tensor& xi, const std::vector<at::Tensor>& ci) {
            return at::mm(xi, dense_weight(ci, shape.in_features(), shape.out_features()));
          },
          x, cores, probe);
      auto orders = enumerate_orders(tt.net(), tt.forward_leaves(), 200000);
      INFO(shape.str() << " B=" << tokens << ": " << orders.size() << " orders");
      std::shuffle(orders.begin(), orders.end(), rng);
      for (size_t i = 0; i < orders.size(); ++i) {
        // Every order both ways; and (a sample at d = 4) each paired with another one's backward.
        std::vector<ContractionPlan> plans{ContractionPlan("test", orders[i])};
        if (d < 4 || i < 500) plans.emplace_back("test", orders[i], orders[(i * 7 + 3) % orders.size()]);
        for (const auto& p : plans) {
          INFO(p.str(tt.net()));
          auto shared = std::make_shared<const ContractionPlan>(p);
          check_close(run([&](const at::Tensor& xi, const std::vector<at::Tensor>& ci) {
                            return run_plan(shared, xi, ci);
                          }, x, cores, probe), want);
        }
      }
    }
}

TEST_CASE("plans skip gradients nobody asked for", "[contract]") {
  const TTShape shape({2, 3}, {3, 2}, {1, 2, 3, 2, 1});
  const TTNetwork tt(shape, 4);
  auto cores = random_cores(shape);
  cores[1].requires_grad_();
  const at::Tensor x = at::randn({4, 6}, at::kDouble);
  auto plan = std::make_shared<const ContractionPlan>("merged", merged_order(tt));
  const at::Tensor y = run_plan(plan, x, cores);
  const auto g = torch::autograd::grad({y.sum()}, {cores[1]});
  const at::Tensor want = torch::autograd::grad(
      {at::mm(x, dense_weight(cores, 6, 6)).sum()}, {cores[1]})[0];
  CHECK(at::allclose(g[0], want, 1e-9, 1e-9));
}

TEST_CASE("TTLinear runs the plan it is given, rank vectors and bias included", "[contract]") {
  TTLinear layer(TTLinearOptions({2, 3, 2}, {3, 2, 2}, {1, 2, 3, 4, 3, 2, 1}));
  layer->to(at::kDouble);
  {
    at::NoGradGuard no_grad;
    for (auto& d : layer->rank_vectors()) d.uniform_(-1, 1);
    layer->rank_vectors()[2][1] = 0.001;  // pruned
    layer->bias.uniform_(-1, 1);
  }
  const TTShape& shape = layer->shape();
  const TTNetwork tt(shape, 5);
  const at::Tensor x = at::randn({5, 12}, at::kDouble).requires_grad_();
  const at::Tensor probe = at::randn({5, 12}, at::kDouble);
  std::vector<at::Tensor> params{x};
  for (const auto& p : layer->parameters()) params.push_back(p);

  // Reference: each d (pruned entries zeroed) scales its core's right bond, W by plain merges.
  std::vector<at::Tensor> scaled = layer->cores();
  for (size_t k = 0; k + 1 < scaled.size(); ++k) {
    const at::Tensor d = layer->rank_vectors()[k];
    scaled[k] = scaled[k] * at::where(d.abs() >= 1e-2, d, at::zeros_like(d)).view({1, 1, -1});
  }
  const at::Tensor y_ref = at::mm(x, dense_weight(scaled, 12, 12)) + layer->bias;
  const auto g_ref = torch::autograd::grad({(y_ref * probe).sum()}, params);

  for (const auto& order : {merged_order(tt), core_by_core_order(tt), reconstruct_order(tt)}) {
    layer->set_plan(std::make_shared<const ContractionPlan>("test", order));
    INFO(order.str(tt.net()));
    const at::Tensor y = layer->forward(x);
    CHECK(at::allclose(y, y_ref, 1e-9, 1e-9));
    const auto g = torch::autograd::grad({(y * probe).sum()}, params);
    for (size_t i = 0; i < g.size(); ++i) CHECK(at::allclose(g[i], g_ref[i], 1e-9, 1e-9));
  }
}
