// TTLinear against a dense weight rebuilt here by one einsum over the whole chain, with float64
// autograd through that reconstruction as the gradient reference; the float32 merged path with
// the fast kernels on and off.
#include "core/kernels/cpu/thin_gemm.h"
#include "core/kernels/fast_kernels.h"
#include "core/layers/tt_linear.h"
#include "core/util/error.h"
#include "tests/support/catch.h"
#include "tests/support/tt_reference.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <torch/nn/module.h>

#include <random>
#include <sstream>

using namespace comera;
using comera::testing::dense_weight;
using Catch::Matchers::Contains;

namespace {

double rel_err(const at::Tensor& a, const at::Tensor& b) {
  const double scale = b.abs().max().item<double>();
  return (a - b).abs().max().item<double>() / (scale > 0 ? scale : 1.0);
}

struct RandomLayer {
  TTLinear layer;
  std::vector<int64_t> lead;  // leading shape of the input
};

// Modes in [min_mode, 4], ranks in [min(2, bound), min(6, bound)] when min_mode > 1.
RandomLayer random_layer(std::mt19937& rng, int64_t d, int64_t min_mode = 1) {
  std::uniform_int_distribution<int64_t> mode(min_mode, 4), lead_dims(1, 3), lead_size(1, 4);
  std::vector<int64_t> in(d), out(d);
  for (auto& m : in) m = mode(rng);
  for (auto& m : out) m = mode(rng);
  std::vector<int64_t> sizes(in);
  sizes.insert(sizes.end(), out.begin(), out.end());
  std::vector<int64_t> ranks(2 * d + 1, 1);
  for (int64_t k = 1; k < 2 * d; ++k) {
    int64_t left = 1, right = 1;
    for (int64_t j = 0; j < k; ++j) left *= sizes[j];
    for (int64_t j = k; j < 2 * d; ++j) right *= sizes[j];
    const int64_t bound = std::min(left, right);
    ranks[k] = std::uniform_int_distribution<int64_t>(std::min(min_mode, bound),
                                                       std::min(bound, int64_t{6}))(rng);
  }
  TTLinear layer(TTLinearOptions(in, out, ranks));
  layer->to(at::kDouble);
  std::vector<int64_t> lead(lead_dims(rng));
  for (auto& s : lead) s = lead_size(rng);
  return {layer, lead};
}

at::Tensor random_input(const RandomLayer& r) {
  auto shape = r.lead;
  shape.push_back(r.layer->shape().in_features());
  return at::randn(shape, at::kDouble);
}

// Sets a random subset of every rank vector under the threshold (both signs), always the last
// entry, never the first.
void prune_some(TTLinearImpl& layer, std::mt19937& rng) {
  c10::NoGradGuard no_grad;
  const double t = layer.threshold();
  for (auto& d : layer.rank_vectors()) {
    d.uniform_(0.5, 1.5);
    for (int64_t j = 1; j < d.size(0); ++j)
      if (rng() % 3 == 0 || j + 1 == d.size(0)) d[j].fill_((rng() % 2 ? 0.5 : -0.9) * t);
  }
}

at::Tensor reference_output(TTLinearImpl& layer, const at::Tensor& x) {
  auto W = dense_weight(layer.cores(), layer.rank_vectors(), layer.threshold());
  auto y = at::matmul(x, W);
  return layer.bias.defined() ? y + layer.bias : y;
}

int64_t param_count(const torch::nn::Module& m) {
  int64_t n = 0;
  for (const auto& p : m.parameters()) n += p.numel();
  return n;
}

// fn() at 1 and 2 threads (two split the batch rows and share the chains' sides out), the fast
// kernels on and off; the thread count restored after.
template <typename Fn>
void each_kernel_setting(const Fn& fn) {
  const int saved_threads = at::get_num_threads();
  for (const int threads : {1, 2})
    for (const bool fast : {true, false}) {
      at::set_num_threads(threads);
      const FastKernelsGuard kernels(fast);
      INFO("kernels " << (thin::enabled() ? "AVX-512" : "composite ATen path") << ", threads " << threads);
      fn();
    }
  at::set_num_threads(saved_threads);
}

}  // namespace

TEST_CASE("TTLinear forward equals x·W for random shapes, d = 1..4", "[tt_linear]") {
  std::mt19937 rng(7);
  at::manual_seed(7);
  for (int64_t d = 1; d <= 4; ++d)
    for (int trial = 0; trial < 4; ++trial) {
      auto r = random_layer(rng, d);
      if (trial % 2) prune_some(*r.layer, rng);
      auto x = random_input(r);
      auto y = r.layer->forward(x);
      INFO(r.layer->shape().str());
      auto expect_shape = r.lead;
      expect_shape.push_back(r.layer->shape().out_features());
      CHECK(y.sizes().vec() == expect_shape);
      CHECK(rel_err(y, reference_output(*r.layer, x)) < 1e-12);
    }
}

TEST_CASE("TTLinear gradients equal float64 autograd through the dense weight", "[tt_linear]") {
  std::mt19937 rng(11);
  at::manual_seed(11);
  for (int64_t d = 1; d <= 4; ++d)
    for (int trial = 0; trial < 3; ++trial) {
      auto r = random_layer(rng, d);
      auto& layer = *r.layer;
      const bool pruned = trial > 0;
      if (pruned) prune_some(layer, rng);
      INFO(layer.shape().str() << (pruned ? " pruned" : ""));
      auto x = random_input(r).requires_grad_();
      auto y = layer.forward(x);
      auto g = at::randn(y.sizes(), at::kDouble);
      y.backward(g);

      std::vector<at::Tensor> cores, ranks;
      for (const auto& c : layer.cores()) cores.push_back(c.detach().clone().requires_grad_());
      for (const auto& v : layer.rank_vectors()) ranks.push_back(v.detach().clone().requires_grad_());
      auto bias = layer.bias.detach().clone().requires_grad_();
      auto xr = x.detach().clone().requires_grad_();
      auto yr = at::matmul(xr, dense_weight(cores, ranks, layer.threshold())) + bias;
      yr.backward(g);

      CHECK(rel_err(x.grad(), xr.grad()) < 1e-9);
      CHECK(rel_err(layer.bias.grad(), bias.grad()) < 1e-9);
      for (size_t k = 0; k < cores.size(); ++k) {
        INFO("core " << k);
        CHECK(rel_err(layer.cores()[k].grad(), cores[k].grad()) < 1e-9);
      }
      for (size_t k = 0; k < ranks.size(); ++k) {
        INFO("rank vector " << k + 1);
        auto v = layer.rank_vectors()[k];
        CHECK(rel_err(v.grad(), ranks[k].grad()) < 1e-9);
        auto pruned_mask = v.detach().abs() < layer.threshold();
        CHECK(v.grad().masked_select(pruned_mask).abs().sum().item<double>() == 0.0);
      }
    }
}

TEST_CASE("TTLinear float32 matches the float64 reference, fast kernels on and off", "[tt_linear]") {
  // Shapes that exercise every tail: in/out off multiples of 16 and 64, batches off the
  // register blocks and the 48-row chunks, padded middle ranks 16..64 and one past 64 (composite).
  struct Case {
    std::vector<int64_t> in, out, ranks;
    std::vector<int64_t> lead;
  };
  const std::vector<Case> cases{
      {{5, 7}, {3, 11}, {1, 5, 30, 11, 1}, {97}},
      {{12, 8, 8}, {8, 8, 12}, {1, 12, 30, 30, 30, 12, 1}, {2, 61}},
      {{3, 6}, {5, 4}, {1, 3, 16, 4, 1}, {1}},
      {{9, 9}, {7, 10}, {1, 9, 47, 10, 1}, {3, 5, 7}},
      {{10, 10}, {9, 9}, {1, 10, 64, 9, 1}, {50}},
      {{10, 10}, {9, 9}, {1, 10, 65, 9, 1}, {13}},
      {{33}, {17}, {1, 17, 1}, {49}},
      {{2, 3, 2, 2}, {3, 2, 2, 2}, {1, 2, 5, 7, 20, 6, 4, 2, 1}, {2, 37}},
      // The paper's FFN shape: its output side's merges and peels are big enough to be shared
      // out in blocks (GemmTeam) while the other thread has only the small input side.
      {{12, 8, 8}, {12, 16, 16}, {1, 12, 30, 30, 30, 16, 1}, {7}},
      // Past 8 MB of output (here 24 MB, 2,049 rows of 3,072) the forward's Y, then the
      // backward's dX, are written with non-temporal stores.
      {{12, 8, 8}, {12, 16, 16}, {1, 12, 30, 30, 30, 16, 1}, {2049}},
      {{16, 16, 12}, {8, 8, 12}, {1, 16, 30, 30, 30, 12, 1}, {2049}},
  };
  each_kernel_setting([&] {
    at::manual_seed(21);
    int index = 0;
    for (const auto& c : cases) {
      TTLinear layer(TTLinearOptions(c.in, c.out, c.ranks));
      {
        c10::NoGradGuard no_grad;
        for (auto& d : layer->rank_vectors()) d.uniform_(0.5, 1.5);
        // One pruned entry (below the threshold, masked to 0) in the first and middle bonds.
        const auto& ds = layer->rank_vectors();
        for (const size_t k : {size_t{0}, ds.size() / 2})
          if (k < ds.size() && ds[k].numel() > 1) ds[k][1].fill_(layer->threshold() / 2);
      }
      INFO(layer->shape().str());
      auto shape = c.lead;
      shape.push_back(layer->shape().in_features());
      const bool input_grad = index++ % 2 == 0;
      auto x = at::randn(shape).requires_grad_(input_grad);
      auto y = layer->forward(x);
      auto g = at::randn(y.sizes());
      y.backward(g);

      std::vector<at::Tensor> cores, ranks;
      for (const auto& t : layer->cores()) cores.push_back(t.detach().to(at::kDouble).requires_grad_());
      for (const auto& t : layer->rank_vectors())
        ranks.push_back(t.detach().to(at::kDouble).requires_grad_());
      auto bias = layer->bias.detach().to(at::kDouble).requires_grad_();
      auto xr = x.detach().to(at::kDouble).requires_grad_();
      auto yr = at::matmul(xr, dense_weight(cores, ranks, layer->threshold())) + bias;
      yr.backward(g.to(at::kDouble));

      const double tol = 1e-4;
      CHECK(rel_err(y.to(at::kDouble), yr) < tol);
      if (input_grad) CHECK(rel_err(x.grad().to(at::kDouble), xr.grad()) < tol);
      CHECK(rel_err(layer->bias.grad().to(at::kDouble), bias.grad()) < tol);
      for (size_t k = 0; k < cores.size(); ++k)
        CHECK(rel_err(layer->cores()[k].grad().to(at::kDouble), cores[k].grad()) < tol);
      for (size_t k = 0; k < ranks.size(); ++k)
        CHECK(rel_err(layer->rank_vectors()[k].grad().to(at::kDouble), ranks[k].grad()) < tol);
    }
  });
}

TEST_CASE("TT layers sharing an input run as one pass and match the float64 reference", "[tt_linear]") {
  // Three layers reading the same 60 features, as a self-attention's Q, K and V: chains of
  // d = 2, 1 and 3, padded middle ranks 32, 16 and 48, one without a bias, one with a pruned
  // entry; rows off the register blocks and the 48-row chunks.
  struct Spec {
    std::vector<int64_t> in, out, ranks;
    bool bias;
  };
  const std::vector<Spec> specs{{{6, 10}, {4, 7}, {1, 5, 20, 7, 1}, true},
                                {{60}, {9}, {1, 9, 1}, false},
                                {{3, 4, 5}, {3, 4, 4}, {1, 3, 10, 40, 8, 4, 1}, true}};
  each_kernel_setting([&] {
    at::manual_seed(5);
    std::vector<TTLinear> layers;
    std::vector<TTLinearImpl*> group;
    for (const auto& sp : specs) {
      layers.emplace_back(TTLinearOptions(sp.in, sp.out, sp.ranks).bias(sp.bias));
      group.push_back(layers.back().get());
      c10::NoGradGuard no_grad;
      for (auto& d : layers.back()->rank_vectors()) d.uniform_(0.5, 1.5);
    }
    {
      c10::NoGradGuard no_grad;
      layers[2]->rank_vectors()[2][3].fill_(layers[2]->threshold() / 2);
    }
    auto x = at::randn({2, 53, 60}).requires_grad_();
    const auto ys = tt_linear_shared_input(x, group);
    REQUIRE(ys.size() == 3);
    std::vector<at::Tensor> gs;
    at::Tensor loss = at::zeros({}, at::kFloat);
    for (const auto& y : ys) {
      gs.push_back(at::randn(y.sizes()));
      loss = loss + (y * gs.back()).sum();
    }
    loss.backward();

    auto xr = x.detach().to(at::kDouble).requires_grad_();
    at::Tensor loss_r = at::zeros({}, at::kDouble);
    std::vector<std::vector<at::Tensor>> cores(3), ranks(3);
    std::vector<at::Tensor> biases(3), yrs(3);
    for (size_t l = 0; l < 3; ++l) {
      for (const auto& t : layers[l]->cores()) cores[l].push_back(t.detach().to(at::kDouble).requires_grad_());
      for (const auto& t : layers[l]->rank_vectors())
        ranks[l].push_back(t.detach().to(at::kDouble).requires_grad_());
      yrs[l] = at::matmul(xr, dense_weight(cores[l], ranks[l], layers[l]->threshold()));
      if (specs[l].bias) {
        biases[l] = layers[l]->bias.detach().to(at::kDouble).requires_grad_();
        yrs[l] = yrs[l] + biases[l];
      }
      loss_r = loss_r + (yrs[l] * gs[l].to(at::kDouble)).sum();
    }
    loss_r.backward();

    const double tol = 1e-4;
    CHECK(rel_err(x.grad().to(at::kDouble), xr.grad()) < tol);
    for (size_t l = 0; l < 3; ++l) {
      INFO("layer " << l << " " << layers[l]->shape().str());
      CHECK(rel_err(ys[l].to(at::kDouble), yrs[l]) < tol);
      CHECK(layers[l]->bias.defined() == specs[l].bias);
      if (specs[l].bias) CHECK(rel_err(layers[l]->bias.grad().to(at::kDouble), biases[l].grad()) < tol);
      for (size_t k = 0; k < cores[l].size(); ++k)
        CHECK(rel_err(layers[l]->cores()[k].grad().to(at::kDouble), cores[l][k].grad()) < tol);
      for (size_t k = 0; k < ranks[l].size(); ++k)
        CHECK(rel_err(layers[l]->rank_vectors()[k].grad().to(at::kDouble), ranks[l][k].grad()) < tol);
    }
  });
}

TEST_CASE("the fast-kernel switch: thin kernels follow it, guards restore it", "[tt_linear]") {
  const bool avx512 = thin::enabled();
  REQUIRE(fast_kernels_enabled());
  {
    const FastKernelsGuard off(false);
    CHECK_FALSE(fast_kernels_enabled());
    CHECK_FALSE(thin::enabled());
    {
      const FastKernelsGuard on(true);
      CHECK(thin::enabled() == avx512);
    }
    CHECK_FALSE(fast_kernels_enabled());
  }
  CHECK(fast_kernels_enabled());
  CHECK(thin::enabled() == avx512);
}

TEST_CASE("TTLinear with an empty bond outputs its bias and gets zero gradients", "[tt_linear]") {
  at::manual_seed(3);
  TTLinear layer(TTLinearOptions({3, 4}, {2, 5}, {1, 3, 4, 2, 1}));
  layer->to(at::kDouble);
  {
    c10::NoGradGuard no_grad;
    layer->rank_vectors()[1].fill_(1e-3);
  }
  auto x = at::randn({2, 3, 12}, at::kDouble).requires_grad_();
  auto y = layer->forward(x);
  CHECK((y - layer->bias).abs().max().item<double>() == 0.0);
  y.backward(at::randn(y.sizes(), at::kDouble));
  CHECK(x.grad().abs().max().item<double>() == 0.0);
  for (const auto& p : layer->cores()) CHECK(p.grad().abs().max().item<double>() == 0.0);
  for (const auto& p : layer->rank_vectors()) CHECK(p.grad().abs().max().item<double>() == 0.0);
  CHECK(layer->bias.grad().sum().item<double>() != 0.0);

  for (bool fold : {false, true}) {
    auto copy = std::dynamic_pointer_cast<TTLinearImpl>(layer->clone());
    auto result = copy->truncate(fold);
    CHECK(result.ranks_after == std::vector<int64_t>{1, 1, 1, 1, 1});
    auto z = copy->forward(x.detach());
    CHECK((z - copy->bias).abs().max().item<double>() == 0.0);
    CHECK(param_count(*copy) == (3 + 4 + 2 + 5) + 3 + 10);
  }
}

TEST_CASE("TTLinear truncation keeps outputs and slices parameters in place", "[tt_linear]") {
  std::mt19937 rng(5);
  at::manual_seed(5);
  for (int64_t d = 1; d <= 3; ++d)
    for (bool fold : {false, true}) {
      auto r = random_layer(rng, d, 2);
      auto& layer = *r.layer;
      prune_some(layer, rng);
      INFO(layer.shape().str() << (fold ? " fold" : ""));
      auto x = random_input(r);
      auto before = layer.forward(x).detach();

      // Expected ranks and sizes, counted from the rank vectors here.
      std::vector<int64_t> kept_ranks{1};
      for (const auto& v : layer.rank_vectors())
        kept_ranks.push_back((v.abs() >= layer.threshold()).sum().item<int64_t>());
      kept_ranks.push_back(1);
      int64_t expect = layer.shape().out_features();  // bias
      for (int64_t k = 0; k < 2 * d; ++k)
        expect += kept_ranks[k] * layer.shape().mode(k) * kept_ranks[k + 1];
      for (int64_t k = 1; k < 2 * d; ++k) expect += kept_ranks[k];

      auto named = layer.named_parameters();
      std::vector<std::pair<const c10::TensorImpl*, at::Tensor>> old;
      for (const auto& p : named) old.emplace_back(p.value().unsafeGetTensorImpl(), p.value().detach().clone());
      layer.forward(x).sum().backward();

      auto result = layer.truncate(fold);
      CHECK(result.ranks_before != result.ranks_after);
      CHECK(result.ranks_after == kept_ranks);
      CHECK(layer.shape().ranks() == kept_ranks);
      CHECK(param_count(layer) == expect);
      CHECK(rel_err(layer.forward(x), before) < 1e-10);

      // Same Variables as before (optimisers hold them), stale gradients gone.
      auto now = layer.named_parameters();
      for (size_t i = 0; i < old.size(); ++i) CHECK(now[i].value().unsafeGetTensorImpl() == old[i].first);
      for (const auto& c : layer.cores()) CHECK_FALSE(c.grad().defined());
      for (const auto& v : layer.rank_vectors()) {
        CHECK_FALSE(v.grad().defined());
        if (fold) CHECK(v.detach().eq(1.0).all().item<bool>());
      }
      // Slicing the old tensor by the reported indices gives the new one (before folding).
      for (const auto& slice : result.slices) {
        auto it = std::find_if(old.begin(), old.end(), [&](const auto& o) {
          return o.first == slice.param.unsafeGetTensorImpl();
        });
        REQUIRE(it != old.end());
        auto sliced = it->second;
        for (const auto& [dim, index] : slice.kept) sliced = sliced.index_select(dim, index);
        CHECK(sliced.sizes() == slice.param.sizes());
        if (!fold) CHECK(sliced.equal(slice.param.detach()));
      }
      // clone() rebuilds the truncated shape.
      auto copy = std::dynamic_pointer_cast<TTLinearImpl>(layer.clone());
      CHECK(copy->shape().ranks() == kept_ranks);
      CHECK(rel_err(copy->forward(x), before) < 1e-10);
    }
}

TEST_CASE("TTLinear init gives Var(W) = 1/(in+out) whatever the ranks", "[tt_linear]") {
  struct Case {
    std::vector<int64_t> in, out, ranks;
    int seeds;  // a low-rank W is a noisy sample of its own variance: small layers need more
  };
  for (const auto& c : {Case{{12, 8, 8}, {8, 8, 12}, {1, 12, 30, 30, 30, 12, 1}, 8},
                        Case{{16, 12}, {4, 6}, {1, 7, 20, 3, 1}, 100},
                        Case{{40}, {24}, {1, 9, 1}, 200}}) {
    double var = 0;
    const int seeds = c.seeds;
    int64_t in = 0, out = 0;
    for (int seed = 0; seed < seeds; ++seed) {
      at::manual_seed(100 + seed);
      TTLinear layer(TTLinearOptions(c.in, c.out, c.ranks));
      in = layer->shape().in_features(), out = layer->shape().out_features();
      std::vector<at::Tensor> cores, ranks;
      for (const auto& t : layer->cores()) cores.push_back(t.detach().to(at::kDouble));
      for (const auto& t : layer->rank_vectors()) ranks.push_back(t.detach().to(at::kDouble));
      var += dense_weight(cores, ranks, layer->threshold()).pow(2).mean().item<double>() / seeds;
      const double bound = 1.0 / std::sqrt(static_cast<double>(out));
      CHECK(layer->bias.abs().max().item<double>() <= bound);
    }
    INFO(in << " -> " << out);
    CHECK(var == Approx(1.0 / static_cast<double>(in + out)).epsilon(0.10));
  }
}

TEST_CASE("TTLinear prints like a LibTorch module and validates", "[tt_linear]") {
  TTLinear layer(TTLinearOptions({12, 8, 8}, {8, 8, 12}, {1, 12, 30, 30, 30, 12, 1}));
  std::ostringstream os;
  layer->pretty_print(os);
  CHECK(os.str() ==
        "comera::TTLinear(in=768, out=768, modes=[12,8,8|8,8,12], ranks=[1,12,30,30,30,12,1], "
        "bias=true)");
  CHECK(layer->dense_equivalent() == 768 * 768);
  CHECK(layer->layer_kind() == "tt_linear");
  std::vector<std::string> names;
  for (const auto& p : layer->named_parameters()) names.push_back(p.key());
  CHECK(names == std::vector<std::string>{"core0", "core1", "core2", "core3", "core4", "core5",
                                          "rank1", "rank2", "rank3", "rank4", "rank5", "bias"});
  TTLinear nobias(TTLinearOptions({4}, {3}, {1, 2, 1}).bias(false));
  std::ostringstream os2;
  nobias->pretty_print(os2);
  CHECK(os2.str() == "comera::TTLinear(in=4, out=3, modes=[4|3], ranks=[1,2,1], bias=false)");
  CHECK(nobias->forward(at::ones({5, 4})).sizes() == at::IntArrayRef{5, 3});

  CHECK_THROWS_WITH(layer->forward(at::ones({2, 700})),
                    Contains("[2, 700]") && Contains("in_features = 768"));
  CHECK_THROWS_WITH(TTLinear(TTLinearOptions({12, 8, 8}, {8, 8, 12}, {1, 13, 30, 30, 30, 12, 1})),
                    Contains("r_1 = 13 exceeds its full-rank bound 12"));
  CHECK_THROWS_WITH(TTLinear(TTLinearOptions({12, 8}, {8, 8, 12}, {1, 2, 2, 2, 1})),
                    Contains("2 input modes but 3 output modes"));
}
