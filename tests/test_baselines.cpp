// The baselines users compare against (docs/baselines.md): GaLore against torch's AdamW and a
// float64 GaLore written here, its projection sides, refresh schedule and state size against the
// published formula; the low-rank layer and LTE against float64 references (LTE with one head
// merging every step against LoRA training of W); the "method" key's rewrites; a sweep over the
// methods recording each like any trial; `comera bench methods` and its plot.
#include "core/layers/low_rank_linear.h"
#include "core/layers/lte_linear.h"
#include "core/layers/size.h"
#include "core/models/model_config.h"
#include "core/models/transformer.h"
#include "core/training/experiment.h"
#include "core/training/galore.h"
#include "core/training/method.h"
#include "core/training/optimizer.h"
#include "core/util/config_reader.h"
#include "core/util/error.h"
#include "core/util/source_dir.h"
#include "search/bench/methods_plot.h"
#include "search/reproduce/paper_spec.h"
#include "search/sweep/published_figures.h"
#include "search/sweep/trial_expansion.h"
#include "search/sweep/sweep_runner.h"
#include "search/sweep/sweep_spec.h"
#include "tests/support/catch.h"
#include "tests/support/cli_process.h"
#include "tests/support/temp_dir.h"
#include "tests/support/tiny_experiment.h"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <ATen/ATen.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>

#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <string>

using namespace comera;
using Catch::Matchers::Contains;
using comera::testing::TempDir;

namespace {

// Parameters of one float64 weight with gradients set by hand.
struct OneWeight : torch::nn::Module {
  OneWeight(int64_t rows, int64_t cols, uint64_t seed) {
    at::manual_seed(seed);
    w = register_parameter("w", at::randn({rows, cols}, at::kDouble));
  }
  at::Tensor w;
};

std::vector<torch::optim::OptimizerParamGroup> one_group(const at::Tensor& w, double lr, double decay) {
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(std::vector<at::Tensor>{w},
                      std::make_unique<torch::optim::AdamWOptions>(
                          torch::optim::AdamWOptions(lr).weight_decay(decay)));
  return groups;
}

// Each singular vector's largest entry positive, as GaLore fixes its signs.
at::Tensor positive_largest(at::Tensor p, bool rows) {
  for (int64_t i = 0; i < (rows ? p.size(0) : p.size(1)); ++i) {
    auto v = rows ? p[i] : p.select(1, i);
    const auto largest = v[v.abs().argmax().item<int64_t>()].item<double>();
    if (largest < 0) v.neg_();
  }
  return p;
}

// GaLore written out in float64 for a list of gradients: SVD at steps 0, T, 2T..., Adam on
// the projection with moments kept, torch AdamW's bias correction and decoupled decay.
at::Tensor reference_galore(at::Tensor w, const std::vector<at::Tensor>& grads, int64_t rank,
                            int64_t gap, double scale, double lr, double decay) {
  const double b1 = 0.9, b2 = 0.999, eps = 1e-8;
  const bool right = w.size(0) >= w.size(1);
  at::Tensor p, m, v;
  for (size_t t = 0; t < grads.size(); ++t) {
    const auto& g = grads[t];
    if (t % gap == 0) {
      const auto svd = at::linalg_svd(g, false);
      p = right ? positive_largest(std::get<2>(svd).narrow(0, 0, rank).clone(), true)
                : positive_largest(std::get<0>(svd).narrow(1, 0, rank).clone(), false);
    }
    const auto r = right ? g.matmul(p.t()) : p.t().matmul(g);
    if (!m.defined()) m = at::zeros_like(r), v = at::zeros_like(r);
    m = b1 * m + (1 - b1) * r;
    v = b2 * v + (1 - b2) * r * r;
    const double k = static_cast<double>(t + 1);
    const auto mhat = m / (1 - std::pow(b1, k)), vhat = v / (1 - std::pow(b2, k));
    const auto n = mhat / (vhat.sqrt() + eps);
    const auto back = (right ? n.matmul(p) : p.matmul(n)) * scale;
    w = w * (1 - lr * decay) - lr * back;
  }
  return w;
}

}  // namespace

TEST_CASE("GaLore at full rank with a stable singular basis takes AdamW's steps", "[baselines]") {
  // Gradients diagonal with magnitudes in a fixed order and signs that change: the SVD's
  // singular vectors are the coordinate axes every step, so the projection (refreshed every
  // step, T = 1) is the identity and, at scale 1, GaLore must equal torch's own AdamW.
  for (const auto& shape : std::vector<std::pair<int64_t, int64_t>>{{6, 4}, {4, 6}, {4, 4}}) {
    INFO(shape.first << "x" << shape.second);
    OneWeight a(shape.first, shape.second, 1), b(shape.first, shape.second, 1);
    const int64_t k = std::min(shape.first, shape.second);
    Galore galore(one_group(a.w, 0.01, 0.1), torch::optim::AdamWOptions(0.01), {k, 1, 1.0}, {a.w});
    torch::optim::AdamW adamw(std::vector<at::Tensor>{b.w},
                              torch::optim::AdamWOptions(0.01).weight_decay(0.1));
    for (int t = 0; t < 6; ++t) {
      auto g = at::zeros({shape.first, shape.second}, at::kDouble);
      for (int64_t i = 0; i < k; ++i)
        g[i][i] = std::pow(2.0, 3 - i) * (1 + 0.3 * std::cos(t + i)) * ((t + i) % 3 == 0 ? -1 : 1);
      a.w.mutable_grad() = g.clone();
      b.w.mutable_grad() = g.clone();
      galore.step();
      adamw.step();
    }
    CHECK(at::allclose(a.w, b.w, 1e-12, 1e-14));
  }
}

TEST_CASE("GaLore projects on the side its shape says, with the published shapes", "[baselines]") {
  SECTION("shapes") {
    const auto tall = galore_shapes(6, 3, 2), wide = galore_shapes(3, 6, 2), square = galore_shapes(4, 4, 2);
    CHECK(tall.right);
    CHECK(tall.projector == std::vector<int64_t>{2, 3});
    CHECK(tall.moments == std::vector<int64_t>{6, 2});
    CHECK_FALSE(wide.right);
    CHECK(wide.projector == std::vector<int64_t>{3, 2});
    CHECK(wide.moments == std::vector<int64_t>{2, 6});
    CHECK(square.right);
    CHECK(square.projector == std::vector<int64_t>{2, 4});
    CHECK(galore_shapes(6, 3, 9).projector == std::vector<int64_t>{3, 3});  // rank capped
  }
  SECTION("the projector spans the gradient's top singular vectors") {
    for (const auto& shape : std::vector<std::pair<int64_t, int64_t>>{{7, 5}, {5, 7}, {6, 6}}) {
      INFO(shape.first << "x" << shape.second);
      OneWeight a(shape.first, shape.second, 2);
      Galore galore(one_group(a.w, 0.01, 0), torch::optim::AdamWOptions(0.01), {2, 200, 0.25}, {a.w});
      const auto g = at::randn({shape.first, shape.second}, at::kDouble);
      a.w.mutable_grad() = g;
      galore.step();
      const auto& s = static_cast<const GaloreParamState&>(*galore.state().begin()->second);
      const auto expected = galore_shapes(shape.first, shape.second, 2);
      CHECK(s.projector().sizes().vec() == expected.projector);
      CHECK(s.exp_avg().sizes().vec() == expected.moments);
      const auto p = expected.right ? s.projector() : s.projector().t();  // (2, side)
      CHECK(at::allclose(p.matmul(p.t()), at::eye(2, at::kDouble), 1e-10, 1e-12));
      // The projection keeps the energy of the top two singular values.
      const auto sv = at::linalg_svdvals(g);
      const double top = (sv[0] * sv[0] + sv[1] * sv[1]).item<double>();
      const auto r = expected.right ? g.matmul(p.t()) : p.matmul(g);
      CHECK(r.pow(2).sum().item<double>() == Approx(top).epsilon(1e-10));
    }
  }
}

TEST_CASE("GaLore refreshes its projector at steps 0, T, 2T and keeps the moments", "[baselines]") {
  for (const auto& shape : std::vector<std::pair<int64_t, int64_t>>{{8, 5}, {5, 8}}) {
    INFO(shape.first << "x" << shape.second);
    OneWeight a(shape.first, shape.second, 3);
    const auto w0 = a.w.detach().clone();
    Galore galore(one_group(a.w, 0.02, 0.05), torch::optim::AdamWOptions(0.02), {3, 3, 0.25}, {a.w});
    std::vector<at::Tensor> grads;
    std::vector<at::Tensor> projectors;
    for (int t = 0; t < 8; ++t) {
      grads.push_back(at::randn({shape.first, shape.second}, at::kDouble));
      a.w.mutable_grad() = grads.back().clone();
      galore.step();
      projectors.push_back(
          static_cast<const GaloreParamState&>(*galore.state().begin()->second).projector().clone());
    }
    // Same projector within a period, a new one at each refresh.
    for (int t = 1; t < 8; ++t) {
      INFO("step " << t);
      CHECK(at::equal(projectors[t], projectors[t - 1]) == (t % 3 != 0));
    }
    CHECK(at::allclose(a.w, reference_galore(w0, grads, 3, 3, 0.25, 0.02, 0.05), 1e-10, 1e-12));
  }
}

TEST_CASE("GaLore's memory is the published mn + mr + 2nr per weight", "[baselines]") {
  // Weights (m <= n): the parameter, the projector m x r and two r x n moments.
  for (const auto& shape : std::vector<std::pair<int64_t, int64_t>>{{16, 40}, {40, 16}}) {
    const int64_t m = std::min(shape.first, shape.second), n = std::max(shape.first, shape.second), r = 4;
    OneWeight a(shape.first, shape.second, 4);
    Galore galore(one_group(a.w, 0.01, 0), torch::optim::AdamWOptions(0.01), {r, 200, 0.25}, {a.w});
    CHECK(galore.state_elements(a.w) == m * n);  // no state before the first step
    a.w.mutable_grad() = at::randn_like(a.w);
    galore.step();
    CHECK(galore.state_elements(a.w) == m * n + m * r + 2 * n * r);
  }
}

TEST_CASE("the optimiser factory builds GaLore over the attention and FFN weights", "[baselines]") {
  const auto e = parse_experiment(nlohmann::json{
      {"model", {{"vocab", 50}, {"d_model", 8}, {"heads", 2}, {"layers", 2}, {"ffn", 16},
                 {"max_positions", 8}, {"classes", 3}}},
      {"training", {{"optimizer", {{"kind", "galore"}, {"rank", 2}, {"update_proj_gap", 5},
                                   {"scale", 0.5}}}}}});
  CHECK(e.training.optimizer.settings["rank"] == 2);
  CHECK(e.training.optimizer.settings["update_proj_gap"] == 5);
  CHECK(e.training.optimizer.settings["scale"] == 0.5);
  CHECK(e.training.to_json()["optimizer"]["rank"] == 2);
  auto task = e.model.build(e.training.task, {});
  auto optimizer = make_optimizer(task->model(), e.training.optimizer);
  auto* galore = dynamic_cast<Galore*>(optimizer.get());
  REQUIRE(galore != nullptr);
  int64_t projected = 0;
  for (const auto& item : task->model().named_parameters()) {
    INFO(item.key());
    const bool target = item.key().find("attention.") != std::string::npos ||
                        item.key().find("ffn_") != std::string::npos;
    CHECK(galore->is_projected(item.value()) == (target && item.value().dim() == 2));
    projected += galore->is_projected(item.value());
  }
  CHECK(projected == 2 * 6);  // Q, K, V, O, FFN in and out per layer
  CHECK_THROWS_WITH(parse_experiment(nlohmann::json{
                        {"model", {{"vocab", 50}, {"d_model", 8}, {"heads", 2}, {"classes", 3}}},
                        {"training", {{"optimizer", {{"kind", "galore"}, {"rank", 0}}}}}}),
                    Contains("training.optimizer.rank"));
  CHECK_THROWS_WITH(parse_experiment(nlohmann::json{
                        {"model", {{"vocab", 50}, {"d_model", 8}, {"heads", 2}, {"classes", 3}}},
                        {"training", {{"optimizer", {{"kind", "galore"}, {"amsgrad", true}}}}}}),
                    Contains("amsgrad"));
}

TEST_CASE("the low-rank layer against float64 references", "[baselines]") {
  at::manual_seed(5);
  LowRankLinear layer(LowRankLinearOptions(6, 4, 3));
  layer->to(at::kDouble);
  const auto x = at::randn({2, 5, 6}, at::kDouble);
  const auto upstream = at::randn({2, 5, 4}, at::kDouble);
  (layer->forward(x) * upstream).sum().backward();
  // Reference: W = A·B formed explicitly, y = x·Wᵀ + bias, gradients by the chain rule.
  const auto a = layer->a.detach(), b = layer->b.detach();
  const auto w = a.matmul(b);
  const auto y = x.matmul(w.t()) + layer->bias.detach();
  {
    at::NoGradGuard no_grad;
    CHECK(at::allclose(layer->forward(x), y, 1e-12, 1e-14));
  }
  const auto dy = upstream.reshape({-1, 4}), xs = x.reshape({-1, 6});
  const auto dw = dy.t().matmul(xs);  // dL/dW
  CHECK(at::allclose(layer->a.grad(), dw.matmul(b.t()), 1e-12, 1e-14));
  CHECK(at::allclose(layer->b.grad(), a.t().matmul(dw), 1e-12, 1e-14));
  CHECK(at::allclose(layer->bias.grad(), dy.sum(0), 1e-12, 1e-14));
  CHECK(layer->weight().sizes() == at::IntArrayRef({4, 6}));
  // A float32 layer with the same values agrees with the float64 reference.
  LowRankLinear single(LowRankLinearOptions(6, 4, 3));
  {
    at::NoGradGuard no_grad;
    single->a.copy_(a);
    single->b.copy_(b);
    single->bias.copy_(layer->bias);
  }
  CHECK(at::allclose(single->forward(x.to(at::kFloat)).to(at::kDouble), y, 1e-5, 1e-5));
  CHECK_THROWS_WITH(LowRankLinear(LowRankLinearOptions(6, 4, 0)), Contains("rank"));
  CHECK_THROWS_WITH(layer->forward(at::randn({2, 5}, at::kDouble)), Contains("in = 6"));
}

TEST_CASE("LTE with one head merging every step is LoRA training of W", "[baselines]") {
  at::manual_seed(6);
  LteLinear lte(LteLinearOptions(5, 3, 2).heads(1).alpha(4).merge_steps(1));
  lte->to(at::kDouble);
  const double s = 4.0 / 2;
  // LoRA written out: W0 frozen, y = x·(W0 + s·B·A)ᵀ + bias, A and B trained.
  const auto w0 = lte->weight.detach().clone(), bias = lte->bias.detach().clone();
  auto a = lte->lora_a[0].detach().clone().requires_grad_(true);
  auto b = lte->lora_b[0].detach().clone().requires_grad_(true);
  CHECK(at::equal(b, at::zeros_like(b)));
  torch::optim::Adam lora_opt(std::vector<at::Tensor>{a, b}, torch::optim::AdamOptions(0.05));
  torch::optim::Adam lte_opt(lte->parameters(), torch::optim::AdamOptions(0.05));
  const auto x = at::randn({4, 3, 5}, at::kDouble), target = at::randn({4, 3, 3}, at::kDouble);
  for (int step = 0; step < 5; ++step) {
    lte_opt.zero_grad();
    lora_opt.zero_grad();
    (lte->forward(x) - target).pow(2).sum().backward();
    (at::linear(x, w0 + s * b.matmul(a), bias) - target).pow(2).sum().backward();
    lte_opt.step();
    lora_opt.step();
    lte->after_step();
    INFO("step " << step);
    CHECK(at::allclose(lte->lora_a[0], a, 1e-12, 1e-14));
    CHECK(at::allclose(lte->lora_b[0], b, 1e-12, 1e-14));
    CHECK(at::allclose(lte->weight, w0 + s * b.detach().matmul(a.detach()), 1e-12, 1e-14));
  }
  // Only the factors carry optimiser state; W and bias never get a gradient.
  CHECK_FALSE(lte->weight.grad().defined());
  CHECK_FALSE(lte->bias.grad().defined());
  CHECK(lte_opt.state().size() == 2);
  // Evaluation uses the merged weight alone.
  lte->eval();
  {
    at::NoGradGuard no_grad;
    CHECK(at::allclose(lte->forward(x), at::linear(x, w0 + s * b.matmul(a), bias), 1e-12, 1e-14));
  }
}

TEST_CASE("LTE splits the batch over its heads and merges their mean", "[baselines]") {
  at::manual_seed(7);
  LteLinear lte(LteLinearOptions(6, 4, 2).heads(2).alpha(3).merge_steps(2));
  lte->to(at::kDouble);
  const double s = 1.5;
  // A orthogonal, scaled by sqrt(in / r): A·Aᵀ = (in / r)·I (initialised in float32).
  for (int64_t h = 0; h < 2; ++h)
    CHECK(at::allclose(lte->lora_a[h].matmul(lte->lora_a[h].t()), 3.0 * at::eye(2, at::kDouble), 1e-5, 1e-5));
  {
    at::NoGradGuard no_grad;
    lte->lora_b.normal_();
  }
  const auto w = lte->weight.detach().clone(), bias = lte->bias.detach().clone();
  const auto a = lte->lora_a.detach().clone(), b = lte->lora_b.detach().clone();
  auto check_heads = [&](int64_t batch) {
    INFO("batch " << batch);
    const auto x = at::randn({batch, 3, 6}, at::kDouble);
    at::NoGradGuard no_grad;
    const auto y = lte->forward(x);
    const auto chunks = x.tensor_split(2, 0);
    int64_t row = 0;
    for (int64_t h = 0; h < 2; ++h) {
      const auto& xh = chunks[h];
      const auto expected = at::linear(xh, w + s * b[h].matmul(a[h]), bias);
      CHECK(at::allclose(y.narrow(0, row, xh.size(0)), expected, 1e-12, 1e-14));
      row += xh.size(0);
    }
  };
  check_heads(4);
  check_heads(3);  // uneven: 2 and 1 examples
  check_heads(1);  // the second head idle
  // merge_steps 2: nothing after one step, the mean of the heads after two.
  lte->after_step();
  CHECK(at::equal(lte->weight, w));
  lte->after_step();
  const auto merged = w + s * (b[0].matmul(a[0]) + b[1].matmul(a[1])) / 2;
  CHECK(at::allclose(lte->weight, merged, 1e-12, 1e-14));
  // The next merge adds only what changed since this one.
  {
    at::NoGradGuard no_grad;
    lte->lora_b.add_(1.0);
  }
  lte->merge();
  const auto b2 = b + 1.0;
  const auto again = merged + s * ((b2[0] - b[0]).matmul(a[0]) + (b2[1] - b[1]).matmul(a[1])) / 2;
  CHECK(at::allclose(lte->weight, again, 1e-12, 1e-14));
}

TEST_CASE("model.low_rank and model.lte choose layer kinds per layer", "[baselines]") {
  const nlohmann::json base = {{"vocab", 50}, {"d_model", 8}, {"heads", 2}, {"layers", 1},
                               {"ffn", 16}, {"max_positions", 8}, {"classes", 3}};
  auto json = base;
  json["low_rank"] = {{"attention", {{"rank", 2}}}};
  json["lte"] = {{"ffn_in", {{"rank", 3}, {"heads", 2}, {"alpha", 6}, {"merge_steps", 4}}}};
  const auto c = parse_model_config(json);
  CHECK(c.attention.low_rank == 2);
  CHECK(c.ffn_in.lte.rank == 3);
  CHECK(c.ffn_in.lte.heads == 2);
  CHECK(c.ffn_in.lte.merge_steps == 4);
  CHECK(c.ffn_out.low_rank == 0);
  CHECK(parse_model_config(c.to_json()).to_json() == c.to_json());
  CHECK(c.dense().to_json().count("low_rank") == 0);
  auto clash = base;
  clash["tensorized"] = {{"attention", {{"in_modes", {2, 4}}, {"out_modes", {2, 4}}, {"ranks", 2}}}};
  clash["low_rank"] = {{"attention", {{"rank", 2}}}};
  CHECK_THROWS_WITH(parse_model_config(clash), Contains("model.low_rank.attention") && Contains("tensorized"));
  auto typo = base;
  typo["lte"] = {{"ffn_in", {{"rank", 3}, {"head", 2}}}};
  CHECK_THROWS_WITH(parse_model_config(typo), Contains("model.lte.ffn_in.head"));
  // A rank above min(in, out) holds more parameters than the dense layer (ffn_in: 8 x 16).
  auto wide = base;
  wide["low_rank"] = {{"ffn_in", {{"rank", 9}}}};
  CHECK_THROWS_WITH(parse_model_config(wide), Contains("model.low_rank.ffn_in.rank: 9 is above the layer's rank "
                                                        "bound 8") && Contains("give at most 8"));
  wide["low_rank"] = {{"ffn_in", {{"rank", 8}}}};
  CHECK(parse_model_config(wide).ffn_in.low_rank == 8);
  wide.erase("low_rank");
  wide["lte"] = {{"attention", {{"rank", 12}}}};
  CHECK_THROWS_WITH(parse_model_config(wide), Contains("model.lte.attention.rank: 12 is above"));
}

TEST_CASE("low-rank and LTE layers count against the dense model they stand for", "[baselines]") {
  const nlohmann::json base = {{"vocab", 50}, {"d_model", 8}, {"heads", 2}, {"layers", 1},
                               {"ffn", 16}, {"max_positions", 8}, {"classes", 3}};
  auto json = base;
  json["low_rank"] = {{"attention", {{"rank", 2}}}};
  json["lte"] = {{"ffn_in", {{"rank", 3}, {"heads", 2}}}};
  const auto c = parse_model_config(json);
  Transformer model(c);
  const auto dense = model_size(*Transformer(c.dense())).total_params;
  // Attention: 4 x (8x2 + 2x8) factors in place of 4 x 8x8 weights; ffn_in keeps its 8x16 W
  // beside heads of 2 x (3x8 + 16x3).
  const auto size = model_size(*model);
  CHECK(size.total_params == dense - 4 * 64 + 4 * 32 + 2 * (24 + 48));
  CHECK(size.dense_model_params == dense);
  CHECK(size.compression() == Approx(static_cast<double>(dense) / static_cast<double>(dense + 16)));
}

TEST_CASE("the method key rewrites an experiment into explicit settings", "[baselines]") {
  const auto base = read_json_file(comera::source_dir() + "/experiments/small_two_encoder.json");
  auto with = [&](const std::string& method) {
    auto j = base;
    j["method"] = method;
    j["method_settings"] = {{"galore", {{"rank", 8}}}, {"lte", {{"rank", 4}, {"heads", 2}}},
                            {"lowrank", {{"rank", 6}}}};
    return parse_experiment(j);
  };
  auto count = [](const ExperimentConfig& e, auto* kind) {
    auto task = e.model.build(e.training.task, {});
    int64_t n = 0;
    for (const auto& m : task->model().modules(false))
      n += dynamic_cast<decltype(kind)>(m.get()) != nullptr;
    return n;
  };
  const auto dense = with("dense"), tt = with("tt"), galore = with("galore"), lte = with("lte"),
             low = with("lowrank");
  CHECK(dense.model.settings["tensorized"].empty());
  CHECK_FALSE(dense.training.late.enabled);
  CHECK(tt.model.settings["tensorized"].size() == 5);
  CHECK(tt.training.late.enabled);
  CHECK(galore.training.optimizer.kind == "galore");
  CHECK(galore.training.optimizer.settings["rank"] == 8);
  CHECK(galore.training.optimizer.lr_other == base["training"]["optimizer"]["lr_other"]);  // rates kept
  CHECK(count(lte, static_cast<LteLinearImpl*>(nullptr)) == 2 * 6);
  CHECK(count(low, static_cast<LowRankLinearImpl*>(nullptr)) == 2 * 6);
  CHECK(low.model.settings["low_rank"]["ffn_in"]["rank"] == 6);
  CHECK(lte.model.settings["lte"]["attention"]["heads"] == 2);
  // Applying a method twice changes nothing.
  for (const std::string& method : method_names()) {
    INFO(method);
    auto json = base;
    json["method"] = method;
    const auto once = apply_method(json);
    CHECK(apply_method(once) == once);
  }
  auto bad = base;
  bad["method"] = "lora";
  CHECK_THROWS_WITH(parse_experiment(bad), Contains("method") && Contains("lowrank"));
  bad["method"] = "tt";
  bad["model"].erase("tensorized");
  CHECK_THROWS_WITH(parse_experiment(bad), Contains("model.tensorized is empty"));
  bad["method"] = "lte";
  bad["method_settings"] = {{"lte", {{"rnak", 4}}}};
  CHECK_THROWS_WITH(parse_experiment(bad), Contains("method_settings.lte.rnak"));
}

TEST_CASE("each build trains at its own rates: method_settings.<method>.optimizer", "[baselines]") {
  auto base = read_json_file(comera::source_dir() + "/experiments/small_two_encoder.json");
  base["training"]["optimizer"] = {{"lr_cores", 0.006}, {"lr_ranks", 0.003}, {"lr_other", 0.003}};
  base["method_settings"] = {{"dense", {{"optimizer", {{"lr_other", 0.004}}}}},
                             {"tt", {{"optimizer", {{"lr_other", 0.006}, {"weight_decay", 0.01}}}}},
                             {"galore", {{"rank", 8}, {"optimizer", {{"lr_other", 0.002}}}}}};
  auto with = [&](const std::string& method) {
    auto j = base;
    j["method"] = method;
    return parse_experiment(j).training.optimizer;
  };
  // Without a method the experiment trains as written; each method lays its own keys over it.
  CHECK(parse_experiment(base).training.optimizer.lr_other == 0.003);
  CHECK(with("tt").lr_other == 0.006);
  CHECK(with("tt").weight_decay == 0.01);
  CHECK(with("tt").lr_cores == 0.006);
  CHECK(with("dense").lr_other == 0.004);
  CHECK(with("galore").lr_other == 0.002);
  CHECK(with("galore").kind == "galore");
  CHECK(with("lte").lr_other == 0.003);

  // The dense build (comera train --dense, a sweep's dense trials) takes the dense entry's rates,
  // also from an experiment whose method is tt.
  base["training"]["init_from"] = "runs/pre.pt";
  for (const std::string method : {"", "tt", "dense"}) {
    INFO(method);
    auto j = base;
    if (!method.empty()) j["method"] = method;
    const auto dense = parse_experiment(dense_build(j));
    CHECK(dense.training.optimizer.lr_other == 0.004);
    CHECK(dense.training.optimizer.lr_cores == 0.006);
    CHECK(dense.training.optimizer.weight_decay == 0);
    CHECK(dense.model.settings.value("tensorized", nlohmann::json::object()).empty());
    CHECK_FALSE(dense.training.late.enabled);
    CHECK(dense.training.init_from == "runs/pre_dense.pt");
  }
  auto lte = base;
  lte["method"] = "lte";
  CHECK_THROWS_WITH(dense_build(lte), Contains("method lte") && Contains("leave out"));

  auto bad = base;
  bad["method_settings"] = {{"dense", {{"optimizer", {{"lr", 0.004}}}}}};
  CHECK_THROWS_WITH(parse_experiment(bad), Contains("method_settings.dense.optimizer.lr"));
  bad["method_settings"] = {{"dense", {{"rank", 4}}}};
  CHECK_THROWS_WITH(parse_experiment(bad), Contains("method_settings.dense.rank"));
  bad["method_settings"] = {{"tt", {{"optimizer", {{"lr_other", -1}}}}}};
  bad["method"] = "tt";
  CHECK_THROWS_WITH(parse_experiment(bad), Contains("lr_other"));

  // A sweep's dense baseline trials run at the dense entry's rates; its late trials as written.
  const auto preset = read_json_file(comera::source_dir() + "/experiments/small_two_encoder.json");
  const double written = preset["training"]["optimizer"]["lr_other"];
  auto rates = [&](const nlohmann::json& overrides) {
    const auto spec = sweep::parse_sweep_spec({{"name", "rates"}, {"base", preset},
                                               {"objectives", "size:min,accuracy:max"},
                                               {"baselines", {"dense"}}, {"overrides", overrides},
                                               {"axes", {{"seeds", {1}}}}});
    std::map<std::string, double> by_kind;
    for (const auto& trial : sweep::expand_trials(spec))
      by_kind[trial["kind"]] = trial["experiment"]["training"]["optimizer"]["lr_other"];
    return by_kind;
  };
  const auto given = rates({{"method_settings", {{"dense", {{"optimizer", {{"lr_other", 0.004}}}}}}}});
  CHECK(given == std::map<std::string, double>{{"dense", 0.004}, {"late", written}});
  // The preset itself: its dense build at 3e-3, its tensorized build at its own 6e-3.
  CHECK(rates(nlohmann::json::object()) == std::map<std::string, double>{{"dense", 0.003}, {"late", 0.006}});
}

TEST_CASE("a sweep over methods trains each one and records it like any trial", "[baselines]") {
  TempDir dir;
  const nlohmann::json experiment = {
      {"name", "tiny"},
      {"model",
       {{"vocab", 30522}, {"d_model", 8}, {"heads", 2}, {"layers", 1}, {"ffn", 16},
        {"max_positions", 16}, {"classes", 3}, {"dropout", 0.0},
        {"tensorized", {{"attention", {{"in_modes", {4, 2}}, {"out_modes", {2, 4}}, {"ranks", 2}}}}}}},
      {"training",
       {{"epochs", 2}, {"batch_size", 4}, {"eval_batch_size", 8}, {"seed", 1},
        {"late_stage", {{"start_epoch", 1}, {"loss_target", 0.5}, {"size_ratio", 0.5}}}}},
      {"data",
       {{"dir", comera::source_dir() + "/tests/fixtures/mnli"},
        {"train", "train.tsv"}, {"eval", "dev_matched.tsv"}, {"max_length", 16}}},
      {"method_settings", {{"galore", {{"rank", 2}, {"update_proj_gap", 2}}},
                           {"lte", {{"rank", 2}, {"heads", 2}}},
                           {"lowrank", {{"rank", 2}}}}}};
  const auto spec = sweep::parse_sweep_spec(
      {{"name", "methods"}, {"base", experiment}, {"objectives", "size:min,accuracy:max"},
       {"axes", {{"set", {{"method", {"tt", "dense", "galore", "lte", "lowrank"}}}}}}});
  sweep::SweepOptions options;
  options.db_path = dir.file("r.db");
  const auto report = sweep::run_sweep(spec, options);
  CHECK(sweep::describe_states(report) == "5 trials: 5 complete");
  SQLite::Database db(dir.file("r.db"), SQLite::OPEN_READONLY);
  auto objective = [&](const std::string& method, const std::string& name) {
    SQLite::Statement q(db, "SELECT o.value FROM objectives o JOIN trials t ON t.id = o.trial_id "
                            "WHERE json_extract(t.config, '$.point.method') = ? AND o.name = ?");
    q.bind(1, method), q.bind(2, name);
    REQUIRE(q.executeStep());
    return q.getColumn(0).getDouble();
  };
  auto kind = [&](const std::string& method) {
    SQLite::Statement q(db, "SELECT json_extract(config, '$.kind') FROM trials WHERE "
                            "json_extract(config, '$.point.method') = ?");
    q.bind(1, method);
    REQUIRE(q.executeStep());
    return q.getColumn(0).getString();
  };
  CHECK(kind("tt") == "late");
  for (const std::string method : {"dense", "galore", "lte", "lowrank"}) CHECK(kind(method) == method);
  for (const std::string method : {"tt", "dense", "galore", "lte", "lowrank"}) {
    INFO(method);
    CHECK(objective(method, "accuracy") >= 0);
    CHECK(objective(method, "size") > 0);
    CHECK(std::isfinite(objective(method, "eval_loss")));
  }
  // Sizes in parameters: GaLore trains the dense model; low-rank replaces each 8 x 8 (or 8 x 16)
  // weight by rank-2 factors; LTE keeps W and adds two heads of factors.
  CHECK(objective("galore", "size") == objective("dense", "size"));
  CHECK(objective("lowrank", "size") < objective("dense", "size"));
  CHECK(objective("lte", "size") > objective("dense", "size"));
  // The dense model with 4·64 + 2·128 attention and FFN weights; low-rank: 4·32 + 2·48.
  CHECK(objective("dense", "size") - objective("lowrank", "size") == (4 * 64 + 2 * 128) - (4 * 32 + 2 * 48));
}

TEST_CASE("comera bench methods: every method at every batch, one table, refuses unknown ones",
          "[baselines][cli]") {
  TempDir dir;
  const std::string config = comera::testing::write_tiny_experiment(dir.file("tiny.json"));
  const std::string flags = " --config " + config + " --batches 1,2 --seq 4 --warmup 0 --repeats 1 --threads 1";
  auto r = comera::testing::run_cli("bench methods --json" + flags + " 2>/dev/null");
  INFO(r.output);
  REQUIRE(r.status == 0);
  const auto rows = nlohmann::json::parse(r.output);
  REQUIRE(rows.size() == 10);
  std::set<std::string> seen;
  for (const auto& row : rows) {
    seen.insert(row["method"].get<std::string>() + "@" + std::to_string(row["batch"].get<int64_t>()));
    CHECK(row["median_ms"].get<double>() > 0);
    CHECK(row["peak_tensor_mb"].get<double>() > 0);
    if (row["method"] == "tt") CHECK(row["time_vs_tt"].get<double>() == 1.0);
  }
  CHECK(seen.size() == 10);
  // Side by side: every method at batch 1, then every method at batch 2.
  for (size_t i = 0; i < rows.size(); ++i) CHECK(rows[i]["batch"] == (i < 5 ? 1 : 2));
  r = comera::testing::run_cli("bench methods" + flags + " --methods tt,lora");
  CHECK(r.status != 0);
  CHECK_THAT(r.output, Contains("--methods") && Contains("lora"));
  r = comera::testing::run_cli("bench methods" + flags + " --methods tt,galore --plot " + config);
  CHECK(r.status != 0);
  CHECK_THAT(r.output, Contains("--plot"));
}

TEST_CASE("the Figure 1 plot: one line per method in both panels", "[baselines]") {
  const std::vector<MethodPoint> points{{"tt", 1, 10, 5}, {"galore", 1, 20, 45}, {"tt", 32, 30, 9}};
  const auto script = methods_gnuplot_script(points, "figure \"1\"", "out.png");
  CHECK_THAT(script, Contains("$m0 << EOD\n1 10 5\n32 30 9\nEOD"));
  CHECK_THAT(script, Contains("$m1 << EOD\n1 20 45\nEOD"));
  CHECK_THAT(script, Contains("title \"figure \\\"1\\\"\""));
  CHECK_THAT(script, Contains("using 1:2 with linespoints lw 2 title \"tt\""));
  CHECK_THAT(script, Contains("using 1:3 with linespoints lw 2 title \"galore\""));
}

TEST_CASE("figure1: every method at batch 1, 32, 64 and 128 with the baselines' ranks", "[baselines]") {
  const auto spec = reproduce::load_paper_spec("figure1");
  for (bool full : {false, true}) {
    INFO(full);
    const auto trials = sweep::expand_trials(sweep::parse_sweep_spec(
        reproduce::sweep_json(spec, full), spec.file, sweep::default_figures_file()));
    REQUIRE(trials.size() == 20);
    std::set<std::string> points;
    for (const auto& t : trials) {
      const auto method = t["point"]["method"].get<std::string>();
      points.insert(method + "@" + t["point"]["training.batch_size"].dump());
      const auto e = parse_experiment(t["experiment"]);
      CHECK(e.model.settings["layers"] == (full ? 6 : 2));
      CHECK(e.training.late.enabled == false);
      if (method == "galore") CHECK(e.training.optimizer.settings["rank"] == 256);
      if (method == "lte") CHECK(e.model.settings["lte"]["ffn_in"]["rank"] == 32);
      if (method == "lowrank") CHECK(e.model.settings["low_rank"]["attention"]["rank"] == 64);
      if (method == "tt") CHECK(e.model.settings["tensorized"].size() == 5);
    }
    CHECK(points.size() == 20);
  }
}
