// Size accounting and the size surrogate against hand-computed values and finite differences.
#include "core/kernels/fast_kernels.h"
#include "core/layers/size.h"
#include "core/layers/tt_linear.h"
#include "core/layers/ttm_embedding.h"
#include "core/util/error.h"
#include "tests/support/catch.h"

#include <ATen/ATen.h>
#include <torch/autograd.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>

using namespace comera;
using Catch::Matchers::Contains;

namespace {

TTMEmbedding paper_embedding() {
  return TTMEmbedding(TTMEmbeddingOptions(30522, {16, 20, 10, 10}, {4, 4, 8, 6}, {1, 32, 32, 32, 1}));
}

void set_rank_vector(TTMEmbeddingImpl& layer, size_t k, const std::vector<double>& values) {
  at::NoGradGuard no_grad;
  layer.rank_vectors()[k].copy_(at::tensor(values, at::kDouble));
}

struct BlockImpl : torch::nn::Module {
  BlockImpl() {
    emb = register_module("emb", TTMEmbedding(TTMEmbeddingOptions(100, {10, 10}, {4, 2}, {1, 5, 1})));
    lin = register_module("lin", torch::nn::Linear(8, 3));
    norm = register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({3})));
  }
  TTMEmbedding emb{nullptr};
  torch::nn::Linear lin{nullptr};
  torch::nn::LayerNorm norm{nullptr};
};
TORCH_MODULE(Block);

struct OuterImpl : torch::nn::Module {
  OuterImpl() {
    block = register_module("block", Block());
    head = register_module("head", torch::nn::Linear(3, 2));
  }
  Block block{nullptr};
  torch::nn::Linear head{nullptr};
};
TORCH_MODULE(Outer);

}  // namespace

TEST_CASE("exact size of the paper's embedding, pruned and emptied", "[size]") {
  auto emb = paper_embedding();
  CHECK(effective_ranks(*emb) == std::vector<int64_t>{1, 32, 32, 32, 1});
  CHECK(exact_size(*emb) == 167808);
  {
    at::NoGradGuard no_grad;
    emb->rank_vectors()[0].narrow(0, 0, 5).fill_(1e-3);  // r1: 32 -> 27
    emb->rank_vectors()[2].narrow(0, 30, 2).fill_(-0.005);  // r3: 32 -> 30
  }
  CHECK(effective_ranks(*emb) == std::vector<int64_t>{1, 27, 32, 30, 1});
  // 1*64*27 + 27*80*32 + 32*80*30 + 30*60*1
  CHECK(exact_size(*emb) == 1728 + 69120 + 76800 + 1800);
  {
    at::NoGradGuard no_grad;
    emb->rank_vectors()[1].fill_(0);
  }
  CHECK(effective_ranks(*emb) == std::vector<int64_t>{1, 27, 0, 30, 1});
  CHECK(exact_size(*emb) == 0);
}

TEST_CASE("weighted surrogate equals S at d = 1 and hand values elsewhere", "[size]") {
  auto emb = paper_embedding();
  CHECK(surrogate_size(*emb, SurrogateKind::Weighted).item<double>() == Approx(167808).epsilon(1e-6));

  // [2,2,2]x[1,2,1] ranks 1,2,2,1: core sizes 2, 4, 2; d1 = (1, 0.5), d2 = (-1, 3).
  TTMEmbedding small(TTMEmbeddingOptions(8, {2, 2, 2}, {1, 2, 1}, {1, 2, 2, 1}));
  small->to(at::kDouble);
  set_rank_vector(*small, 0, {1, 0.5});
  set_rank_vector(*small, 1, {-1, 3});
  // 2*1.5 + 1.5*4*4 + 4*2 = 3 + 24 + 8
  const at::Tensor s = surrogate_size(*small, SurrogateKind::Weighted);
  CHECK(s.item<double>() == Approx(35));
  // dS/dd1_j = sign(d1_j) (2 + 4*4) = 18 sign; dS/dd2_j = sign(d2_j) (1.5*4 + 2) = 8 sign
  const auto g = torch::autograd::grad({s}, small->rank_vectors());
  CHECK(g[0][0].item<double>() == Approx(18));
  CHECK(g[0][1].item<double>() == Approx(18));
  CHECK(g[1][0].item<double>() == Approx(-8));
  CHECK(g[1][1].item<double>() == Approx(8));
  // Central finite differences agree.
  for (size_t k = 0; k < 2; ++k)
    for (int64_t j = 0; j < 2; ++j) {
      const double h = 1e-6;
      auto value_at = [&](double delta) {
        at::NoGradGuard no_grad;
        small->rank_vectors()[k][j] += delta;
        const double v = surrogate_size(*small, SurrogateKind::Weighted).item<double>();
        small->rank_vectors()[k][j] -= delta;
        return v;
      };
      CHECK((value_at(h) - value_at(-h)) / (2 * h) == Approx(g[k][j].item<double>()).epsilon(1e-6));
    }

  // A pruned entry counts 0 and gets no gradient: d1 = (1, 0.005) -> ||d1|| = 1.
  set_rank_vector(*small, 0, {1, 0.005});
  const at::Tensor pruned = surrogate_size(*small, SurrogateKind::Weighted);
  CHECK(pruned.item<double>() == Approx(2 * 1 + 1 * 4 * 4 + 4 * 2));
  CHECK(torch::autograd::grad({pruned}, {small->rank_vectors()[0]})[0][1].item<double>() == 0.0);
}

TEST_CASE("mean surrogate is the mean |d| over surviving entries", "[size]") {
  TTMEmbedding small(TTMEmbeddingOptions(8, {2, 2, 2}, {1, 2, 1}, {1, 2, 2, 1}));
  small->to(at::kDouble);
  set_rank_vector(*small, 0, {1, 0.5});
  set_rank_vector(*small, 1, {-1, 3});
  CHECK(surrogate_size(*small, SurrogateKind::Mean).item<double>() == Approx((1 + 0.5 + 1 + 3) / 4.0));
  set_rank_vector(*small, 0, {1, 0.005});
  const at::Tensor m = surrogate_size(*small, SurrogateKind::Mean);
  CHECK(m.item<double>() == Approx((1 + 1 + 3) / 3.0));
  const auto g = torch::autograd::grad({m}, small->rank_vectors());
  CHECK(g[0][0].item<double>() == Approx(1 / 3.0));
  CHECK(g[0][1].item<double>() == 0.0);
  CHECK(g[1][0].item<double>() == Approx(-1 / 3.0));
}

TEST_CASE("model_size over a module tree counts by hand", "[size]") {
  Outer model;
  auto size = model_size(*model);
  // TTM cores 1*40*5 + 5*20*1; rank entries 5; dense: Linear 8*3+3, LayerNorm 3+3, head 3*2+2.
  CHECK(size.tensorized == 300);
  CHECK(size.rank_params == 5);
  CHECK(size.dense_params == 27 + 6 + 8);
  CHECK(size.total_params == 300 + 5 + 41);
  CHECK(size.dense_model_params == 100 * 8 + 41);
  CHECK(size.compression() == Approx(841.0 / 346));
  CHECK(size.megabytes() == Approx(346 * 4 / 1e6));
  REQUIRE(size.layers.size() == 1);
  CHECK(size.layers[0].name == "block.emb");
  CHECK(size.layers[0].kind == "ttm_embedding");
  CHECK(size.layers[0].ranks == std::vector<int64_t>{1, 5, 1});
  CHECK(size.layers[0].dense_equivalent == 800);

  set_rank_vector(*model->block->emb, 0, {1, 1, 0, 1, 1});
  size = model_size(*model);
  CHECK(size.tensorized == 1 * 40 * 4 + 4 * 20 * 1);
  CHECK(size.rank_params == 4);
  CHECK(size.total_params == 240 + 4 + 41);
  CHECK(surrogate_size(*model, SurrogateKind::Weighted).item<double>() == Approx(40 * 4 + 4 * 20));

  // The layer on its own is a tree too.
  CHECK(model_size(*model->block->emb).total_params == 244);
}

TEST_CASE("model_size counts the paper's attention TTLinear beside the embedding", "[size]") {
  torch::nn::Sequential model(paper_embedding(),
                              TTLinear(TTLinearOptions({12, 8, 8}, {8, 8, 12}, {1, 12, 30, 30, 30, 12, 1})));
  const auto size = model_size(*model);
  REQUIRE(size.layers.size() == 2);
  CHECK(size.layers[0].name == "0");
  CHECK(size.layers[1].name == "1");
  CHECK(size.layers[1].kind == "tt_linear");
  // 1*12*12 + 12*8*30 + 30*8*30 + 30*8*30 + 30*8*12 + 12*12*1
  CHECK(size.layers[1].exact == 20448);
  CHECK(size.layers[1].rank_params == 12 + 30 + 30 + 30 + 12);
  CHECK(size.layers[1].dense_equivalent == 768 * 768);
  CHECK(size.tensorized == 167808 + 20448);
  CHECK(size.rank_params == 96 + 114);
  CHECK(size.dense_params == 768);  // the TTLinear's bias
  CHECK(size.total_params == 167808 + 20448 + 96 + 114 + 768);
  CHECK(size.dense_model_params == 30522 * 768 + 768 * 768 + 768);
  // Weighted surrogate at d = 1 is S over both layers.
  CHECK(surrogate_size(*model, SurrogateKind::Weighted).item<double>() ==
        Approx(167808 + 20448).epsilon(1e-6));
  CHECK(surrogate_size(*model, SurrogateKind::Mean).item<double>() == Approx(1.0));
}

TEST_CASE("surrogate from host memory equals the ATen composite, values and gradients", "[size]") {
  // Two layers (a TTM embedding and a TT linear), float32, random signs, some entries pruned and
  // one bond of the embedding emptied; the composite (fast kernels off) is the reference.
  at::manual_seed(9);
  torch::nn::Sequential model(TTMEmbedding(TTMEmbeddingOptions(100, {10, 10}, {4, 2}, {1, 5, 1})),
                              TTLinear(TTLinearOptions({6, 4}, {3, 5}, {1, 6, 9, 5, 1})));
  std::vector<at::Tensor> ranks;
  for (const auto& p : model->named_parameters())
    if (p.key().find("rank") != std::string::npos) ranks.push_back(p.value());
  REQUIRE(ranks.size() == 4);
  for (const bool emptied : {false, true}) {
    {
      at::NoGradGuard no_grad;
      for (auto& d : ranks) d.copy_(at::randn(d.sizes()) * 0.5);
      ranks[2][3].fill_(0.004);  // below the 0.01 threshold
      ranks[3][0].fill_(0);
      if (emptied) ranks[0].fill_(0.001);
    }
    for (const auto kind : {SurrogateKind::Weighted, SurrogateKind::Mean}) {
      INFO("emptied " << emptied << " kind " << (kind == SurrogateKind::Mean ? "mean" : "weighted"));
      const auto fast = surrogate_size(*model, kind);
      const auto fast_grads = torch::autograd::grad({fast * 3}, ranks);
      const FastKernelsGuard composite(false);
      const auto want = surrogate_size(*model, kind);
      const auto want_grads = torch::autograd::grad({want * 3}, ranks);
      CHECK(fast.item<double>() == Approx(want.item<double>()).epsilon(1e-6));
      for (size_t k = 0; k < ranks.size(); ++k) CHECK(at::allclose(fast_grads[k], want_grads[k], 1e-5, 1e-6));
    }
  }
}

TEST_CASE("surrogate kinds parse, unknown names are refused", "[size]") {
  CHECK(parse_surrogate_kind("weighted") == SurrogateKind::Weighted);
  CHECK(parse_surrogate_kind("mean") == SurrogateKind::Mean);
  CHECK_THROWS_WITH(parse_surrogate_kind("l1"),
                    Contains("unknown size surrogate 'l1'") && Contains("weighted"));
}
