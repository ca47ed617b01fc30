// The late stage's gauge (core/training/rank_gauge.h): holding the cores' slice norms changes no
// layer's output, moves a rescaling of the cores back into the rank vectors, and leaves pruned
// entries pruned.
#include "core/layers/ttm_embedding.h"
#include "core/layers/tt_linear.h"
#include "core/training/rank_gauge.h"
#include "tests/support/catch.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/nn/module.h>

using namespace comera;

namespace {

struct TwoLayers : torch::nn::Module {
  TwoLayers() {
    tt = register_module("tt", TTLinear(TTLinearOptions({2, 3}, {3, 2}, {1, 2, 4, 2, 1})));
    ttm = register_module("ttm", TTMEmbedding(TTMEmbeddingOptions(12, {3, 4}, {2, 2}, {1, 3, 1})));
    to(at::kDouble);
  }
  TTLinear tt{nullptr};
  TTMEmbedding ttm{nullptr};
};

at::Tensor outputs(TwoLayers& m, const at::Tensor& x, const at::Tensor& ids) {
  return at::cat({m.tt->forward(x).flatten(), m.ttm->forward(ids).flatten()});
}

}  // namespace

TEST_CASE("holding the gauge keeps every output and moves a rescaling into the rank vectors",
          "[rank_gauge]") {
  TwoLayers m;
  auto gen = at::make_generator<at::CPUGeneratorImpl>(5);
  const auto x = at::randn({4, 6}, gen, at::kDouble);
  const auto ids = at::tensor({0, 5, 11, 7}, at::kLong);
  const auto norms = measure_gauge(m);
  REQUIRE(norms.size() == 2);
  CHECK(norms.at("tt").size() == 4);  // one per core
  CHECK(norms.at("ttm").size() == 2);

  // Grow slice 1 of the TT layer's second bond 3x in the core on its left and 2x in the core on
  // its right, shrink its d 6x (the output stays), and prune entry 2 of that bond.
  {
    at::NoGradGuard no_grad;
    auto cores = m.tt->cores();
    auto d = m.tt->rank_vectors()[1];
    cores[1].select(2, 1).mul_(3);
    cores[2].select(0, 1).mul_(2);
    d[1].div_(6);
    d[2].fill_(0.001);
  }
  const auto before = outputs(m, x, ids);
  const double d1_before = m.tt->rank_vectors()[1][1].item<double>();
  hold_gauge(m, norms);
  const auto after = outputs(m, x, ids);
  CHECK(at::allclose(after, before, 1e-12, 1e-12));

  // The rescaled slice of the core left of the bond is back at its held norm (core 1's RMS entry
  // times sqrt(its entries / 4 slices)), and its d carries the growth.
  const auto left = m.tt->cores()[1];
  const auto d = m.tt->rank_vectors()[1];
  const auto left_norms = left.reshape({-1, left.size(-1)}).norm(2, {0});
  CHECK(left_norms[1].item<double>() == Approx(norms.at("tt")[1] * std::sqrt(left.numel() / 4.0)));
  CHECK(std::abs(d[1].item<double>()) > std::abs(d1_before));
  // Pruned: its entry untouched, so no factor revives it.
  CHECK(d[2].item<double>() == 0.001);

  // Held once per step, the cores between two bonds settle: then nothing moves, and every core
  // keeps its RMS entry (the pruned slice aside, which truncation cuts).
  for (int i = 0; i < 300; ++i) hold_gauge(m, norms);
  const auto settled = d.clone();
  hold_gauge(m, norms);
  CHECK(at::allclose(d, settled, 1e-9, 1e-12));
  CHECK(at::allclose(outputs(m, x, ids), before, 1e-10, 1e-12));
  for (const auto& [name, expected] : norms) {
    INFO(name);
    const auto cores = name == "tt" ? m.tt->cores() : m.ttm->cores();
    for (size_t k = 0; k < cores.size(); ++k)
      if (!(name == "tt" && k == 1))
        CHECK(cores[k].norm().item<double>() / std::sqrt(cores[k].numel()) == Approx(expected[k]).epsilon(1e-6));
  }
}
