// TTMLinear against its weight built entry by entry in this file (float64 autograd): forward,
// gradients, truncation, the full matrix rank the TTM form has where TTLinear's middle bond caps
// it, the initialisation's variance, the format read from a model config, and a bf16 forward.
#include "core/formats/core_chain.h"
#include "core/layers/size.h"
#include "core/layers/tt_linear.h"
#include "core/layers/ttm_linear.h"
#include "core/models/model_config.h"
#include "core/models/transformer.h"
#include "core/util/error.h"
#include "core/util/precision.h"
#include "tests/support/catch.h"

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>
#include <torch/autograd.h>
#include <torch/nn/modules/linear.h>

#include <random>
#include <set>

using namespace comera;
using Catch::Matchers::Contains;

namespace {

// W[i, j] = G_1[:, i_1, j_1, :] diag(d_1) G_2[:, i_2, j_2, :] ... G_d[:, i_d, j_d, :], the
// multi-indices row-major (first mode slowest), pruned d entries read as 0: one entry at a time.
at::Tensor entrywise_weight(const TTMLinearImpl& layer) {
  const auto cores = layer.cores();
  const auto ds = layer.rank_vectors();
  const auto& n = layer.options.in_modes();
  const auto& m = layer.options.out_modes();
  const int64_t in = layer.in_features(), out = layer.out_features();
  std::vector<at::Tensor> entries;
  for (int64_t i = 0; i < in; ++i)
    for (int64_t j = 0; j < out; ++j) {
      int64_t ri = i, rj = j, in_stride = in, out_stride = out;
      at::Tensor v;
      for (size_t k = 0; k < cores.size(); ++k) {
        in_stride /= n[k];
        out_stride /= m[k];
        const int64_t ik = ri / in_stride, jk = rj / out_stride;
        ri %= in_stride;
        rj %= out_stride;
        const auto slice = cores[k].select(1, ik).select(1, jk);  // (r_{k-1}, r_k)
        if (k == 0) {
          v = slice;
        } else {
          const auto& d = ds[k - 1];
          v = at::mm(v * at::where(d.abs() >= layer.threshold(), d, at::zeros_like(d)), slice);
        }
      }
      entries.push_back(v.reshape({}));
    }
  return at::stack(entries).reshape({in, out});
}

std::vector<at::Tensor> params_of(TTMLinearImpl& layer) {
  auto p = layer.cores();
  for (const auto& d : layer.rank_vectors()) p.push_back(d);
  p.push_back(layer.bias);
  return p;
}

}  // namespace

TEST_CASE("TTM linear equals x W + b with W built entry by entry, gradients included", "[ttm_linear]") {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int64_t> mode(1, 4), rank(1, 4);
  for (int d = 1; d <= 3; ++d)
    for (int trial = 0; trial < 3; ++trial) {
      std::vector<int64_t> n, m, r(d + 1, 1);
      for (int k = 0; k < d; ++k) {
        n.push_back(mode(rng));
        m.push_back(mode(rng));
      }
      std::vector<int64_t> sizes;
      for (int k = 0; k < d; ++k) sizes.push_back(n[k] * m[k]);
      const CoreChain bounds(sizes, std::vector<int64_t>(d + 1, 1), "test");
      for (int k = 1; k < d; ++k) r[k] = std::min(rank(rng), bounds.max_rank(k));
      torch::manual_seed(10 * d + trial);
      TTMLinear layer(TTMLinearOptions(n, m, r));
      layer->to(at::kDouble);
      {
        at::NoGradGuard no_grad;
        for (auto& dv : layer->rank_vectors()) {
          dv.uniform_(0.5, 1.5);
          if (dv.numel() > 1) dv[0] = 1e-3;  // pruned
        }
      }
      const auto x = at::randn({2, 3, layer->in_features()}, at::kDouble).requires_grad_();
      const auto proj = at::randn({2, 3, layer->out_features()}, at::kDouble);
      const auto y = layer->forward(x);
      const auto reference = at::matmul(x, entrywise_weight(*layer)) + layer->bias;
      REQUIRE(y.sizes() == reference.sizes());
      CHECK(at::allclose(y, reference, 1e-12, 1e-12));
      auto params = params_of(*layer);
      params.push_back(x);
      const auto got = torch::autograd::grad({(y * proj).sum()}, params);
      const auto want = torch::autograd::grad({(reference * proj).sum()}, params);
      for (size_t k = 0; k < got.size(); ++k) {
        INFO("d " << d << " trial " << trial << " parameter " << k);
        CHECK(at::allclose(got[k], want[k], 1e-10, 1e-12));
      }
    }
}

TEST_CASE("a TTM weight is full rank where TTLinear's middle bond caps the matrix rank", "[ttm_linear]") {
  torch::manual_seed(2);
  // 16 -> 16 at every rank 1: the Kronecker product of two random 4 x 4 matrices, rank 16
  // from 32 parameters; a TT layer's W has at most its middle bond's rank.
  TTMLinear ttm(TTMLinearOptions({4, 4}, {4, 4}, {1, 1, 1}));
  ttm->to(at::kDouble);
  CHECK(ttm->chain().params() == 32);
  CHECK(at::linalg_matrix_rank(ttm->weight().detach()).item<int64_t>() == 16);
  TTLinear tt(TTLinearOptions({4, 4}, {4, 4}, {1, 4, 2, 4, 1}));
  tt->to(at::kDouble);
  const auto w = tt->forward(at::eye(16, at::kDouble)) - tt->bias;
  CHECK(at::linalg_matrix_rank(w.detach()).item<int64_t>() == 2);
}

TEST_CASE("TTM linear initialisation gives W the variance 1/(in + out), as TTLinear's", "[ttm_linear]") {
  // One draw's entries share their cores, so the variance is averaged over 40 draws.
  TTMLinear layer(TTMLinearOptions({8, 8, 4}, {4, 8, 8}, {1, 6, 5, 1}));
  layer->to(at::kDouble);
  double var = 0;
  for (int draw = 0; draw < 40; ++draw) {
    torch::manual_seed(draw);
    layer->reset_parameters();
    var += layer->weight().detach().pow(2).mean().item<double>() / 40;
  }
  CHECK(var == Approx(1.0 / 512.0).epsilon(0.1));
  const auto scales = layer->core_init_scales();
  REQUIRE(scales.size() == 3);
  CHECK(layer->cores()[1].detach().std().item<double>() == Approx(scales[1]).epsilon(0.1));
}

TEST_CASE("TTM linear truncation cuts pruned slices and keeps the output; a dead bond leaves the bias",
          "[ttm_linear]") {
  torch::manual_seed(9);
  TTMLinear layer(TTMLinearOptions({4, 2, 4}, {2, 4, 4}, {1, 5, 4, 1}));
  layer->to(at::kDouble);
  const auto x = at::randn({6, 32}, at::kDouble);
  {
    at::NoGradGuard no_grad;
    layer->rank_vectors()[0][1] = 0;
    layer->rank_vectors()[0][3] = 1e-4;
    layer->rank_vectors()[1][0] = 0;
  }
  const auto before = layer->forward(x).detach();
  const auto cut = layer->truncate(true);
  CHECK(cut.ranks_after == std::vector<int64_t>{1, 3, 3, 1});
  CHECK(layer->cores()[1].sizes() == std::vector<int64_t>{3, 2, 4, 3});
  CHECK(exact_size(*layer) == 1 * 8 * 3 + 3 * 8 * 3 + 3 * 16 * 1);
  CHECK(at::allclose(layer->forward(x), before, 1e-12, 1e-12));
  {
    at::NoGradGuard no_grad;
    layer->rank_vectors()[1].zero_();
  }
  layer->truncate(false);
  CHECK(exact_size(*layer) == 0);
  CHECK(at::allclose(layer->forward(x), layer->bias.expand({6, 32}), 0, 0));
}

TEST_CASE("a model config's \"format\": \"ttm\" builds TTM linear layers; errors name the key",
          "[ttm_linear]") {
  nlohmann::json j = {{"vocab", 50}, {"d_model", 8}, {"heads", 2}, {"layers", 1}, {"ffn", 16},
                      {"max_positions", 16}, {"classes", 3}, {"dropout", 0.0},
                      {"tensorized",
                       {{"attention", {{"format", "ttm"}, {"in_modes", {2, 4}}, {"out_modes", {4, 2}}, {"ranks", 2}}},
                        {"ffn_in", {{"format", "ttm"}, {"in_modes", {2, 4}}, {"out_modes", {4, 4}}, {"ranks", {1, 3, 1}}}},
                        {"ffn_out", {{"in_modes", {4, 4}}, {"out_modes", {2, 4}}, {"ranks", 3}}}}}};
  const auto config = parse_model_config(j);
  CHECK(config.attention.format == "ttm");
  CHECK(config.ffn_out.format == "tt");
  CHECK(config.attention.ranks == std::vector<int64_t>{1, 2, 1});
  const auto written = config.to_json().at("tensorized");
  CHECK(written.at("attention").at("format") == "ttm");
  CHECK_FALSE(written.at("ffn_out").contains("format"));  // the default is not written
  CHECK(parse_model_config([&] { auto k = j; k["tensorized"] = written; return k; }()).ffn_in.format == "ttm");

  torch::manual_seed(4);
  Transformer model(config);
  model->to(at::kDouble);
  model->eval();
  int ttm = 0, tt = 0;
  for (const auto& item : model->named_modules()) {
    ttm += dynamic_cast<TTMLinearImpl*>(item.value().get()) != nullptr;
    tt += dynamic_cast<TTLinearImpl*>(item.value().get()) != nullptr;
  }
  CHECK(ttm == 5);  // query, key, value, output, ffn_in
  CHECK(tt == 1);
  // The same model built dense with each TTM layer's W copied in gives the same logits.
  Transformer dense(config.dense());
  dense->to(at::kDouble);
  dense->eval();
  at::NoGradGuard no_grad;
  auto dense_modules = dense->named_modules();
  auto dense_params = dense->named_parameters();
  std::set<std::string> tensorized;
  for (const auto& item : model->named_modules()) {
    if (dynamic_cast<Tensorized*>(item.value().get())) tensorized.insert(item.key());
    auto target = dense_modules[item.key()];
    if (auto* l = dynamic_cast<TTMLinearImpl*>(item.value().get())) {
      target->as<torch::nn::Linear>()->weight.copy_(entrywise_weight(*l).t());
      target->as<torch::nn::Linear>()->bias.copy_(l->bias);
    } else if (auto* t = dynamic_cast<TTLinearImpl*>(item.value().get())) {
      target->as<torch::nn::Linear>()->weight.copy_((t->forward(at::eye(16, at::kDouble)) - t->bias).t());
      target->as<torch::nn::Linear>()->bias.copy_(t->bias);
    }
  }
  for (const auto& p : model->named_parameters()) {
    if (tensorized.count(p.key().substr(0, p.key().rfind('.')))) continue;
    dense_params[p.key()].copy_(p.value());
  }
  const auto ids = at::randint(0, 50, {2, 5}, at::kLong);
  const auto segments = at::zeros({2, 5}, at::kLong), mask = at::ones({2, 5}, at::kLong);
  CHECK(at::allclose(model->classify(ids, segments, mask), dense->classify(ids, segments, mask), 1e-10, 1e-12));
  // Attention 4 x (1*8*2 + 2*8*1), ffn_in 1*8*3 + 3*16*1, ffn_out (TT, ranks 3) 12+36+18+12.
  const auto size = model_size(*model);
  CHECK(size.tensorized == 4 * 32 + 72 + 78);
  CHECK(size.dense_model_params == model_size(*dense).total_params);

  auto bad = j;
  bad["tensorized"]["attention"]["format"] = "tucker";
  CHECK_THROWS_WITH(parse_model_config(bad), Contains("model.tensorized.attention.format") && Contains("ttm"));
  bad = j;
  bad["tensorized"]["attention"]["out_modes"] = {4, 4};
  CHECK_THROWS_WITH(parse_model_config(bad), Contains("tensorized.attention") && Contains("8 -> 16") &&
                                                 Contains("8 -> 8"));
}

TEST_CASE("TTM linear in a bf16 forward: bf16 output near float64, float32 gradients on the parameters",
          "[ttm_linear][precision]") {
  torch::manual_seed(6);
  TTMLinear layer(TTMLinearOptions({4, 4, 4}, {4, 8, 8}, {1, 6, 5, 1}));
  const auto x = at::randn({256, 64}).requires_grad_();
  const auto g = at::randn({256, 256});
  at::Tensor y;
  {
    const ForwardPrecision bf16(Precision::Bf16);
    y = layer->forward(x);
  }
  REQUIRE(y.scalar_type() == at::kBFloat16);
  y.backward(g.to(at::kBFloat16));

  TTMLinear twin(TTMLinearOptions({4, 4, 4}, {4, 8, 8}, {1, 6, 5, 1}));
  twin->to(at::kDouble);
  {
    at::NoGradGuard no_grad;
    for (size_t k = 0; k < layer->parameters().size(); ++k)
      twin->parameters()[k].copy_(layer->parameters()[k]);
  }
  const auto x64 = x.detach().to(at::kDouble).requires_grad_();
  const auto y64 = at::mm(x64, entrywise_weight(*twin)) + twin->bias;
  y64.backward(g.to(at::kDouble));
  const auto rel = [](const at::Tensor& a, const at::Tensor& b) {
    return ((a.to(at::kDouble) - b).norm() / b.norm()).item<double>();
  };
  CHECK(rel(y, y64) < 1e-2);  // bf16 keeps 8 bits of mantissa: about 4e-3 relative per rounding
  CHECK(rel(x.grad(), x64.grad()) < 2e-2);
  for (size_t k = 0; k < layer->cores().size(); ++k) {
    INFO("core " << k);
    REQUIRE(layer->cores()[k].grad().scalar_type() == at::kFloat);
    CHECK(rel(layer->cores()[k].grad(), twin->cores()[k].grad()) < 5e-2);
  }
  REQUIRE(layer->bias.grad().scalar_type() == at::kFloat);
  CHECK(rel(layer->bias.grad(), twin->bias.grad()) < 2e-2);
}
