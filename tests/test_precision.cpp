// bf16 mixed precision (core/util/precision.h) against float64 references: a TT layer through
// pruned and dead bonds, the TTM lookups, the attention core (with dropout too) and the residual
// layer norm on their fast and composite paths; a short training run against fp32 with the master weights
// and optimiser state kept float32; the setting's config, records and resume check.
#include "core/kernels/dropout_mask.h"
#include "core/kernels/fast_kernels.h"
#include "core/layers/tt_linear.h"
#include "core/layers/ttm_embedding.h"
#include "core/layers/ttm_embedding_bag.h"
#include "core/models/attention_core.h"
#include "core/models/residual_norm.h"
#include "core/training/train_config.h"
#include "core/training/trainer.h"
#include "core/util/config_reader.h"
#include "core/util/precision.h"
#include "tests/support/catch.h"
#include "tests/support/tiny_trainer.h"
#include "tests/support/tt_reference.h"
#include "tests/support/ttm_reference.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/autograd.h>
#include <torch/optim/adamw.h>

#include <cmath>
#include <filesystem>
#include <memory>

using namespace comera;
using namespace comera::testing;
using Catch::Matchers::Contains;

namespace {

// ||a - b|| / ||b|| in float64; 0 when both are 0.
double relative_error(const at::Tensor& a, const at::Tensor& b) {
  const auto a64 = a.to(at::kDouble), b64 = b.to(at::kDouble);
  const double scale = b64.norm().item<double>(), diff = (a64 - b64).norm().item<double>();
  return scale > 0 ? diff / scale : diff;
}

// A bf16 result: within bf16 rounding of the reference, and not as close as float32 would be
// (so the bf16 path is what ran). bf16 keeps 8 significant bits (unit roundoff 2^-9); a TT
// layer's gradients pass through four to six rounded products, so they get 5e-2.
void check_bf16_close(const at::Tensor& got, const at::Tensor& want, const std::string& what,
                      double tolerance = 2e-2) {
  const double e = relative_error(got, want);
  INFO(what << ": relative error " << e);
  CHECK(e < tolerance);
  CHECK(e > 1e-5);
}

std::string temp_path(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / "comera_test_precision";
  std::filesystem::create_directories(dir);
  const auto p = (dir / name).string();
  std::filesystem::remove(p);
  return p;
}

}  // namespace

TEST_CASE("a TT layer's bf16 forward and backward match float64, through pruned and dead bonds",
          "[precision]") {
  enum Case { Full, Pruned, Dead };
  // Fast: the bf16 kernels where the CPU has AVX512-BF16 (tests/test_cpu_kernels.cpp checks
  // them alone), else the composite path, which off always takes.
  for (const bool fast : {true, false})
    for (const Case c : {Full, Pruned, Dead}) {
      INFO("fast kernels " << fast);
      const FastKernelsGuard kernels(fast);
      INFO((c == Full ? "full ranks" : c == Pruned ? "some entries pruned" : "a bond pruned whole"));
      at::manual_seed(5);
      TTLinear layer(TTLinearOptions({4, 4, 4}, {4, 8, 2}, {1, 4, 8, 12, 6, 2, 1}));
      {
        at::NoGradGuard no_grad;
        for (auto& d : layer->rank_vectors()) d.uniform_(0.5, 1.5);
        if (c == Pruned) layer->rank_vectors()[1].narrow(0, 0, 3).fill_(1e-3);
        if (c == Dead) layer->rank_vectors()[2].fill_(1e-3);
        layer->bias.uniform_(-1, 1);
      }
      // 2048 rows: on the composite path fewer take float32 (checked below).
      const auto x = at::randn({2048, 64}).requires_grad_();
      const auto g = at::randn({2048, 64});
      at::Tensor y;
      {
        const ForwardPrecision bf16(Precision::Bf16);
        y = layer->forward(x);
      }
      REQUIRE(y.scalar_type() == at::kBFloat16);
      y.backward(g.to(at::kBFloat16));

      std::vector<at::Tensor> cores64, ranks64;
      for (const auto& t : layer->cores()) cores64.push_back(t.detach().to(at::kDouble).requires_grad_());
      for (const auto& t : layer->rank_vectors()) ranks64.push_back(t.detach().to(at::kDouble).requires_grad_());
      const auto bias64 = layer->bias.detach().to(at::kDouble).requires_grad_();
      const auto x64 = x.detach().to(at::kDouble).requires_grad_();
      const auto y64 = x64.mm(dense_weight(cores64, ranks64, layer->threshold())) + bias64;
      y64.backward(g.to(at::kDouble));

      if (c == Dead) {
        CHECK(relative_error(y, y64) < 1e-2);  // the bias alone, rounded to bf16
      } else {
        check_bf16_close(y, y64, "output");
        check_bf16_close(x.grad(), x64.grad(), "input gradient", 5e-2);
      }
      // Master weights: float32 parameters get float32 gradients.
      for (size_t k = 0; k < cores64.size(); ++k) {
        const auto& grad = layer->cores()[k].grad();
        REQUIRE(grad.scalar_type() == at::kFloat);
        if (c == Dead) CHECK(grad.abs().max().item<double>() == 0.0);
        else check_bf16_close(grad, cores64[k].grad(), "core " + std::to_string(k), 5e-2);
      }
      for (size_t k = 0; k < ranks64.size(); ++k) {
        const auto& grad = layer->rank_vectors()[k].grad();
        REQUIRE(grad.scalar_type() == at::kFloat);
        if (c == Dead) CHECK(grad.abs().max().item<double>() == 0.0);
        else check_bf16_close(grad, ranks64[k].grad(), "rank vector " + std::to_string(k + 1), 5e-2);
      }
      REQUIRE(layer->bias.grad().scalar_type() == at::kFloat);
      CHECK(relative_error(layer->bias.grad(), bias64.grad()) < 1e-2);
    }
}

TEST_CASE("a TT layer in a bf16 forward on the composite path takes float32 below 2048 rows",
          "[precision]") {
  at::manual_seed(9);
  TTLinear layer(TTLinearOptions({4, 4, 4}, {4, 8, 2}, {1, 4, 8, 12, 6, 2, 1}));
  const FastKernelsGuard composite(false);
  for (const int64_t rows : {1, 128, 2047}) {
    INFO(rows << " rows");
    const auto x = at::randn({rows, 64});
    at::Tensor y16;
    {
      const ForwardPrecision bf16(Precision::Bf16);
      y16 = layer->forward(x);
    }
    CHECK(y16.scalar_type() == at::kFloat);
    CHECK(at::equal(y16, layer->forward(x)));
  }
}

TEST_CASE("a TT layer on the bf16 kernels computes in bf16 at every size", "[precision][avx512bf16]") {
  at::manual_seed(9);
  TTLinear layer(TTLinearOptions({4, 4, 4}, {4, 8, 2}, {1, 4, 8, 12, 6, 2, 1}));
  for (const int64_t rows : {1, 7, 128}) {
    INFO(rows << " rows");
    const auto x = at::randn({rows, 64}).requires_grad_();
    const auto g = at::randn({rows, 64});
    at::Tensor y16;
    {
      const ForwardPrecision bf16(Precision::Bf16);
      y16 = layer->forward(x);
    }
    REQUIRE(y16.scalar_type() == at::kBFloat16);
    y16.backward(g.to(at::kBFloat16));
    std::vector<at::Tensor> cores64, ranks64;
    for (const auto& t : layer->cores()) cores64.push_back(t.detach().to(at::kDouble));
    for (const auto& t : layer->rank_vectors()) ranks64.push_back(t.detach().to(at::kDouble));
    const auto w64 = dense_weight(cores64, ranks64, layer->threshold());
    const auto y64 = x.detach().to(at::kDouble).mm(w64) + layer->bias.detach().to(at::kDouble);
    check_bf16_close(y16, y64, "output");
    // A float32 x is narrowed inside the layer and gets its gradient in float32.
    REQUIRE(x.grad().scalar_type() == at::kFloat);
    check_bf16_close(x.grad(), g.to(at::kBFloat16).to(at::kDouble).mm(w64.t()), "input gradient", 5e-2);
    // A bf16 x gets a bf16 gradient.
    const auto xb = x.detach().to(at::kBFloat16).requires_grad_();
    {
      const ForwardPrecision bf16(Precision::Bf16);
      layer->forward(xb).backward(g.to(at::kBFloat16));
    }
    REQUIRE(xb.grad().scalar_type() == at::kBFloat16);
    check_bf16_close(xb.grad(), g.to(at::kBFloat16).to(at::kDouble).mm(w64.t()), "bf16 input gradient", 5e-2);
  }
}

TEST_CASE("the TTM lookups in bf16 match the float64 table, gradients float32", "[precision]") {
  at::manual_seed(6);
  TTMEmbedding emb(TTMEmbeddingOptions(60, {3, 4, 5}, {2, 4, 2}, {1, 5, 6, 1}));
  {
    at::NoGradGuard no_grad;
    for (auto& d : emb->rank_vectors()) d.uniform_(0.5, 1.5);
    emb->rank_vectors()[0][0] = 1e-3;  // pruned
  }
  const auto ids = at::tensor({7, 3, 7, 59, 0, 7, 12, 31}, at::kLong);
  std::vector<at::Tensor> params = emb->cores();
  for (const auto& d : emb->rank_vectors()) params.push_back(d);
  const auto table = dense_table(*emb).to(at::kDouble);
  const auto expected = table.index_select(0, ids);
  const auto probe = at::randn(expected.sizes(), at::kDouble);
  const auto g_ref = torch::autograd::grad({(expected * probe).sum()}, params);
  for (const bool fast : {true, false}) {
    INFO("fast kernels " << fast);
    const FastKernelsGuard kernels(fast);
    at::Tensor rows;
    {
      const ForwardPrecision bf16(Precision::Bf16);
      rows = emb->forward(ids);
    }
    REQUIRE(rows.scalar_type() == at::kBFloat16);
    check_bf16_close(rows, expected, "rows");
    const auto g = torch::autograd::grad({(rows.to(at::kDouble) * probe).sum()}, params);
    for (size_t p = 0; p < params.size(); ++p) {
      REQUIRE(g[p].scalar_type() == at::kFloat);
      check_bf16_close(g[p], g_ref[p], "parameter " + std::to_string(p), 5e-2);
    }
  }

  // A bag pools the bf16 rows in float32 (LibTorch 1.13 has no bf16 embedding_bag on the CPU).
  TTMEmbeddingBag bag(TTMEmbeddingBagOptions(50, 12).vocab_modes({3, 4, 5}).emb_modes({2, 3, 2}).ranks({1, 3, 4, 1}));
  const auto bag_table = dense_table(bag->table()).to(at::kDouble);
  const auto offsets = at::tensor({0, 3, 3}, at::kLong);
  const auto bag_ids = at::tensor({7, 3, 7, 49, 0, 12, 31}, at::kLong);
  const auto want = at::stack({bag_table.index_select(0, bag_ids.narrow(0, 0, 3)).sum(0),
                               at::zeros({12}, at::kDouble),
                               bag_table.index_select(0, bag_ids.narrow(0, 3, 4)).sum(0)});
  at::Tensor pooled;
  {
    const ForwardPrecision bf16(Precision::Bf16);
    pooled = bag->forward(bag_ids, offsets);
  }
  CHECK(pooled.scalar_type() == at::kFloat);
  check_bf16_close(pooled, want, "bags");
}

TEST_CASE("attention and the residual layer norm on bf16 inputs match float64 on both paths",
          "[precision]") {
  // Head size 8 takes the oneDNN bf16 path; 16 with an even length, the AVX512-BF16 kernels
  // where the CPU has them.
  for (const int64_t D : {16, 32}) {
    INFO("head size " << D / 2);
    at::manual_seed(7);
    const int64_t B = 3, T = 10, heads = 2;
    const auto q = at::randn({B, T, D}), k = at::randn({B, T, D}), v = at::randn({B, T, D});
    auto bias = at::zeros({B, 1, 1, T});
    bias.narrow(3, 8, 2).fill_(-1e4);  // padding
    const auto x = at::randn({B, T, D}), w = at::rand({D}) + 0.5, b = at::randn({D});
    const auto probe = at::randn({B, T, D}, at::kDouble);

    const auto q64 = q.to(at::kDouble).requires_grad_(), k64 = k.to(at::kDouble).requires_grad_(),
               v64 = v.to(at::kDouble).requires_grad_();
    at::Tensor ctx64, norm64;
    {
      const FastKernelsGuard composite(false);
      ctx64 = attention_core(q64, k64, v64, bias.to(at::kDouble), heads, 0.0, false, 0.25);
      norm64 = residual_layer_norm(x.to(at::kDouble), ctx64, 0.0, false, w.to(at::kDouble),
                                   b.to(at::kDouble), 1e-5);
    }
    const auto g64 = torch::autograd::grad({(norm64 * probe).sum()}, {q64, k64, v64});
    for (const bool fast : {true, false}) {
      INFO("fast kernels " << fast);
      const FastKernelsGuard kernels(fast);
      // As a bf16 forward hands them over: the projections' outputs in bf16.
      const auto qb = q.to(at::kBFloat16).requires_grad_(), kb = k.to(at::kBFloat16).requires_grad_(),
                 vb = v.to(at::kBFloat16).requires_grad_();
      at::Tensor norm;
      {
        const ForwardPrecision bf16(Precision::Bf16);
        const auto ctx = attention_core(qb, kb, vb, bias, heads, 0.0, false, 0.25);
        norm = residual_layer_norm(x, ctx, 0.0, false, w, b, 1e-5);
      }
      CHECK(norm.scalar_type() == at::kFloat);  // the residual stream stays float32
      check_bf16_close(norm, norm64, "normed output");
      const auto g = torch::autograd::grad({(norm.to(at::kDouble) * probe).sum()}, {qb, kb, vb});
      for (int i = 0; i < 3; ++i)
        check_bf16_close(g[i], g64[i], "gradient of q, k, v " + std::to_string(i), 5e-2);
    }
  }
}

TEST_CASE("bf16 attention with dropout draws the composite path's mask and matches float64",
          "[precision]") {
  // Head size 8: the oneDNN bf16 path; 16: the AVX512-BF16 kernels where the CPU has them.
  for (const int64_t D : {16, 32}) {
    INFO("head size " << D / 2);
    at::manual_seed(8);
    const int64_t B = 2, T = 32, heads = 2;
    const auto q = at::randn({B, T, D}), k = at::randn({B, T, D}), v = at::randn({B, T, D});
    const auto bias = at::zeros({B, 1, 1, T});
    const auto probe = at::randn({B, T, D}, at::kDouble);
    const auto with_seed = [](uint64_t seed) {
      return std::make_unique<DropoutSeeds>(at::make_generator<at::CPUGeneratorImpl>(seed));
    };
    const auto q64 = q.to(at::kDouble).requires_grad_(), k64 = k.to(at::kDouble).requires_grad_(),
               v64 = v.to(at::kDouble).requires_grad_();
    at::Tensor ctx64;
    {
      const FastKernelsGuard composite(false);
      const auto seeds = with_seed(21);
      ctx64 = attention_core(q64, k64, v64, bias.to(at::kDouble), heads, 0.2, true, 0.5);
    }
    const auto g64 = torch::autograd::grad({(ctx64 * probe).sum()}, {q64, k64, v64});
    const auto qb = q.to(at::kBFloat16).requires_grad_(), kb = k.to(at::kBFloat16).requires_grad_(),
               vb = v.to(at::kBFloat16).requires_grad_();
    at::Tensor ctx;
    {
      const auto seeds = with_seed(21);
      const ForwardPrecision bf16(Precision::Bf16);
      ctx = attention_core(qb, kb, vb, bias, heads, 0.2, true, 0.5);
    }
    REQUIRE(ctx.scalar_type() == at::kBFloat16);
    check_bf16_close(ctx, ctx64, "context");
    const auto g = torch::autograd::grad({(ctx.to(at::kDouble) * probe).sum()}, {qb, kb, vb});
    for (int i = 0; i < 3; ++i) check_bf16_close(g[i], g64[i], "gradient of q, k, v " + std::to_string(i), 5e-2);
    // Another seed drops other entries: the mask is what the paths share.
    {
      const auto seeds = with_seed(22);
      const ForwardPrecision bf16(Precision::Bf16);
      CHECK(relative_error(attention_core(qb, kb, vb, bias, heads, 0.2, true, 0.5), ctx64) > 0.1);
    }
  }
}

TEST_CASE("the fused residual layer norm reads a bf16 branch, dropout mask as the composite path's",
          "[precision]") {
  at::manual_seed(10);
  const auto x = at::randn({4, 8, 48}), f = at::randn({4, 8, 48}), w = at::rand({48}) + 0.5, b = at::randn({48});
  const auto probe = at::randn({4, 8, 48}, at::kDouble);
  const auto with_seed = [](uint64_t seed) {
    return std::make_unique<DropoutSeeds>(at::make_generator<at::CPUGeneratorImpl>(seed));
  };
  const auto x64 = x.to(at::kDouble).requires_grad_(), f64 = f.to(at::kDouble).requires_grad_();
  at::Tensor y64;
  {
    const FastKernelsGuard composite(false);
    const auto seeds = with_seed(5);
    y64 = residual_layer_norm(x64, f64, 0.2, true, w.to(at::kDouble), b.to(at::kDouble), 1e-5);
  }
  const auto g64 = torch::autograd::grad({(y64 * probe).sum()}, {x64, f64});
  const auto xr = x.clone().requires_grad_(), fb = f.to(at::kBFloat16).requires_grad_();
  at::Tensor y;
  {
    const auto seeds = with_seed(5);
    y = residual_layer_norm(xr, fb, 0.2, true, w, b, 1e-5);
  }
  REQUIRE(y.scalar_type() == at::kFloat);
  // Only the branch's rounding to bf16 separates them.
  CHECK(relative_error(y, y64) < 1e-2);
  const auto g = torch::autograd::grad({(y.to(at::kDouble) * probe).sum()}, {xr, fb});
  CHECK(g[0].scalar_type() == at::kFloat);
  REQUIRE(g[1].scalar_type() == at::kBFloat16);
  CHECK(relative_error(g[0], g64[0]) < 1e-2);
  check_bf16_close(g[1], g64[1], "branch gradient");
}

TEST_CASE("a bf16 run tracks the fp32 run and keeps float32 weights and optimiser state",
          "[precision]") {
  const auto train = synthetic_pairs(40, 1), eval = synthetic_pairs(12, 2);
  auto c = tiny_training();
  c.late.enabled = false;
  c.epochs = 2;
  TrainerOptions quiet;
  Trainer fp32(tiny_model(), c, pairs_data(train, eval), quiet);
  const auto r32 = fp32.run();
  c.precision = Precision::Bf16;
  Trainer bf16(tiny_model(), c, pairs_data(train, eval), quiet);
  const auto r16 = bf16.run();
  REQUIRE(r16.epochs.size() == r32.epochs.size());
  for (size_t e = 0; e < r32.epochs.size(); ++e) {
    INFO("epoch " << e + 1 << ": train loss fp32 " << r32.epochs[e].train_loss << ", bf16 "
                  << r16.epochs[e].train_loss);
    CHECK(std::abs(r16.epochs[e].train_loss - r32.epochs[e].train_loss) < 0.03 * r32.epochs[e].train_loss);
    CHECK(std::abs(r16.epochs[e].eval_loss - r32.epochs[e].eval_loss) < 0.03 * r32.epochs[e].eval_loss);
  }
  CHECK(r16.epochs.back().train_loss != r32.epochs.back().train_loss);  // bf16 did compute
  for (const auto& p : bf16.model().parameters()) CHECK(p.scalar_type() == at::kFloat);
  int64_t states = 0;
  for (const auto& [key, state] : bf16.optimizer().state()) {
    const auto& s = static_cast<const torch::optim::AdamWParamState&>(*state);
    CHECK(s.exp_avg().scalar_type() == at::kFloat);
    CHECK(s.exp_avg_sq().scalar_type() == at::kFloat);
    ++states;
  }
  CHECK(states > 0);
}

TEST_CASE("training.precision is read, checked, recorded only when not fp32, and kept on resume",
          "[precision]") {
  const auto read = [](const nlohmann::json& j) {
    const ConfigReader r(j, "training");
    auto c = read_train_config(r);
    r.finish();
    return c;
  };
  CHECK(read({{"task", "classification"}}).precision == Precision::Fp32);
  CHECK(read({{"task", "classification"}, {"precision", "bf16"}}).precision == Precision::Bf16);
  CHECK_THROWS_WITH(read({{"task", "classification"}, {"precision", "fp16"}}),
                    Contains("training.precision") && Contains("fp32"));
  CHECK_FALSE(TrainConfig{}.to_json().contains("precision"));
  TrainConfig bf16;
  bf16.precision = Precision::Bf16;
  CHECK(bf16.to_json().at("precision") == "bf16");
  CHECK_THROWS_WITH(require_precision(Precision::Bf16, c10::Device("cuda"), "--precision"),
                    Contains("--precision") && Contains("fp32"));

  const auto train = synthetic_pairs(10, 1), eval = synthetic_pairs(4, 2);
  const auto path = temp_path("bf16.pt");
  auto c = tiny_training();
  c.epochs = 1;
  c.late.enabled = false;  // one epoch: no late stage to run
  c.precision = Precision::Bf16;
  TrainerOptions o;
  o.checkpoint = path;
  Trainer(tiny_model(), c, pairs_data(train, eval), o).run();
  o.resume = true;
  c.precision = Precision::Fp32;
  CHECK_THROWS_WITH(Trainer(tiny_model(), c, pairs_data(train, eval), o), Contains("precision"));
}
