// The BERT-style model: the paper's parameter counts by hand, TT/TTM forward against the same
// model with the weights reconstructed dense (float64), padding mask, config validation, the
// dropout mask, the fused dropout and attention paths against plain ATen ops in float64, each
// with the fast kernels on and off (composite path).
#include "core/kernels/fast_kernels.h"
#include "core/layers/size.h"
#include "core/layers/tt_linear.h"
#include "core/layers/ttm_embedding.h"
#include "core/models/attention_core.h"
#include "core/models/dropout.h"
#include "core/kernels/dropout_mask.h"
#include "core/models/residual_norm.h"
#include "core/models/transformer.h"
#include "core/training/experiment.h"
#include "core/util/error.h"
#include "core/util/source_dir.h"
#include "tests/support/catch.h"
#include "tests/support/reads_back.h"

#include <ATen/ATen.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <array>
#include <vector>

using namespace comera;
using Catch::Matchers::Contains;

namespace {

std::string preset(const std::string& name) {
  return comera::source_dir() + "/experiments/" + name;
}

// Small config with every layer kind tensorized (d_model 8 = 2x2x2, ffn 16, vocab 50 in 64 rows).
nlohmann::json tiny_model_json() {
  return {{"vocab", 50}, {"d_model", 8}, {"heads", 2}, {"layers", 2}, {"ffn", 16},
          {"max_positions", 16}, {"classes", 3}, {"dropout", 0.0},
          {"tensorized",
           {{"embedding", {{"vocab_modes", {4, 4, 4}}, {"emb_modes", {2, 2, 2}}, {"ranks", 3}}},
            {"attention", {{"in_modes", {4, 2}}, {"out_modes", {2, 4}}, {"ranks", 3}}},
            {"ffn_in", {{"in_modes", {4, 2}}, {"out_modes", {4, 4}}, {"ranks", 3}}},
            {"ffn_out", {{"in_modes", {4, 4}}, {"out_modes", {2, 4}}, {"ranks", 3}}},
            {"classifier", {{"in_modes", {2, 4}}, {"out_modes", {4, 2}}, {"ranks", 2}}}}}};
}

at::Tensor masked(const at::Tensor& d, double threshold) {
  return at::where(d.abs() >= threshold, d, at::zeros_like(d));
}

// W (in, out) of a TT layer by contracting the chain left to right.
at::Tensor reconstruct_tt(const TTLinearImpl& layer) {
  const auto cores = layer.cores();
  const auto d = layer.rank_vectors();
  auto m = cores[0].reshape({-1, cores[0].size(2)});
  for (size_t k = 1; k < cores.size(); ++k) {
    m = m * masked(d[k - 1], layer.threshold());
    m = at::mm(m, cores[k].reshape({cores[k].size(0), -1})).reshape({-1, cores[k].size(2)});
  }
  return m.reshape({layer.shape().in_features(), layer.shape().out_features()});
}

// The table (vocab, D) of a TTM layer: rows and columns both row-major over the modes.
at::Tensor reconstruct_ttm(const TTMEmbeddingImpl& layer) {
  const auto cores = layer.cores();
  const auto d = layer.rank_vectors();
  auto t = cores[0].reshape({cores[0].size(1), cores[0].size(2), cores[0].size(3)});
  for (size_t k = 1; k < cores.size(); ++k) {
    t = t * masked(d[k - 1], layer.threshold());
    t = at::einsum("ver,rwfs->vwefs", {t, cores[k]})
            .reshape({t.size(0) * cores[k].size(1), t.size(1) * cores[k].size(2), cores[k].size(3)});
  }
  return t.squeeze(2).narrow(0, 0, layer.shape().vocab());
}

}  // namespace

TEST_CASE("the paper's preset has 66,957,315 parameters dense and 1,490,157 tensorized",
          "[models]") {
  const auto e = load_experiment(preset("mnli_six_encoder.json"));
  // Dense by hand: embeddings 30522*768 + 512*768 + 2*768 + LN 2*768 = 23,837,184; per layer
  // 4*(768*768+768) + (768*3072+3072) + (3072*768+768) + 2 LN 2*768 = 7,087,872 (x6);
  // head 768*768+768 + 768*3+3 = 592,899.
  Transformer dense(parse_model_config(e.model.dense().settings));
  const auto ds = model_size(*dense);
  CHECK(ds.total_params == 23837184 + 6 * 7087872 + 592899);
  CHECK(ds.total_params == 66957315);
  CHECK(ds.tensorized == 0);

  // Tensorized by hand: TTM 167,808 cores + 96 rank entries; per layer Q/K/V/O 4*(20,448 + 114
  // + 768), FFN in 28,960 + 118 + 3,072, FFN out 28,960 + 118 + 768, LN 3,072 = 150,388 (x6);
  // pooler 20,448 + 114 + 768, classifier 2,307; position, segment, LN 396,288.
  Transformer tt(parse_model_config(e.model.settings));
  const auto ts = model_size(*tt);
  CHECK(ts.total_params == 167904 + 396288 + 6 * 150388 + 21330 + 2307);
  CHECK(ts.total_params == 1490157);
  CHECK(ts.dense_model_params == 66957315);
  CHECK(ts.compression() == Approx(44.93).epsilon(1e-3));
  int tt_layers = 0, ttm_layers = 0;
  for (const auto& l : ts.layers) (l.kind == "tt_linear" ? tt_layers : ttm_layers)++;
  CHECK(tt_layers == 6 * 6 + 1);
  CHECK(ttm_layers == 1);
}

TEST_CASE("the forward with TT/TTM layers equals the dense model with reconstructed weights",
          "[models]") {
  at::manual_seed(3);
  const auto config = parse_model_config(tiny_model_json());
  Transformer tt(config), dense(config.dense());
  tt->to(at::kDouble);
  dense->to(at::kDouble);
  tt->eval();
  dense->eval();
  at::NoGradGuard no_grad;
  // Rank vectors away from 1, one entry per layer pruned (below the threshold).
  for (const auto& m : tt->modules())
    if (auto* t = dynamic_cast<Tensorized*>(m.get())) {
      for (auto& d : t->rank_vectors()) {
        d.uniform_(0.5, 1.5);
        d[0] = 1e-3;
      }
    }
  auto dense_modules = dense->named_modules();
  auto dense_params = dense->named_parameters();
  int reconstructed = 0;
  std::set<std::string> tensorized;
  for (const auto& item : tt->named_modules()) {
    if (dynamic_cast<Tensorized*>(item.value().get())) tensorized.insert(item.key());
    if (auto* l = dynamic_cast<TTLinearImpl*>(item.value().get())) {
      auto target = dense_modules[item.key()]->as<torch::nn::Linear>();
      REQUIRE(target);
      target->weight.copy_(reconstruct_tt(*l).t());
      target->bias.copy_(l->bias);
      ++reconstructed;
    } else if (auto* e = dynamic_cast<TTMEmbeddingImpl*>(item.value().get())) {
      auto target = dense_modules[item.key()]->as<torch::nn::Embedding>();
      REQUIRE(target);
      target->weight.copy_(reconstruct_ttm(*e));
      ++reconstructed;
    }
  }
  CHECK(reconstructed == 2 * 6 + 1 + 1);
  // Everything that is not tensorized has the same name in both models.
  for (const auto& p : tt->named_parameters()) {
    if (tensorized.count(p.key().substr(0, p.key().rfind('.')))) continue;
    REQUIRE(dense_params.contains(p.key()));
    dense_params[p.key()].copy_(p.value());
  }
  const auto ids = at::randint(0, 50, {3, 7}, at::kLong);
  auto segments = at::zeros({3, 7}, at::kLong);
  segments.narrow(1, 4, 3).fill_(1);
  auto mask = at::ones({3, 7}, at::kLong);
  mask[2].narrow(0, 5, 2).zero_();
  const auto a = tt->classify(ids, segments, mask);
  const auto b = dense->classify(ids, segments, mask);
  CHECK(a.sizes() == std::vector<int64_t>{3, 3});
  CHECK(at::allclose(a, b, 1e-10, 1e-12));
  const auto ha = tt->forward(ids, segments, mask), hb = dense->forward(ids, segments, mask);
  CHECK(at::allclose(ha, hb, 1e-10, 1e-12));
}

TEST_CASE("padding is masked: appending padding leaves the real tokens' outputs unchanged",
          "[models]") {
  at::manual_seed(5);
  Transformer model(parse_model_config(tiny_model_json()));
  model->to(at::kDouble);
  model->eval();
  at::NoGradGuard no_grad;
  const auto ids = at::randint(1, 50, {2, 5}, at::kLong);
  const auto seg = at::zeros({2, 5}, at::kLong);
  const auto short_out = model->forward(ids, seg, at::ones({2, 5}, at::kLong));
  const auto padded_ids = at::cat({ids, at::zeros({2, 3}, at::kLong)}, 1);
  auto mask = at::ones({2, 8}, at::kLong);
  mask.narrow(1, 5, 3).zero_();
  const auto long_out = model->forward(padded_ids, at::zeros({2, 8}, at::kLong), mask);
  CHECK(at::allclose(long_out.narrow(1, 0, 5), short_out, 1e-10, 1e-12));
  // Without the mask the padding would leak in.
  const auto leaked = model->forward(padded_ids, at::zeros({2, 8}, at::kLong), at::ones({2, 8}, at::kLong));
  CHECK_FALSE(at::allclose(leaked.narrow(1, 0, 5), short_out, 1e-6, 1e-8));
}

TEST_CASE("the masked-LM head maps every position to vocabulary logits", "[models]") {
  auto j = tiny_model_json();
  j["masked_lm"] = true;
  j["classes"] = 0;
  Transformer model(parse_model_config(j));
  const auto ids = at::randint(0, 50, {2, 6}, at::kLong);
  const auto out = model->masked_lm(ids, at::zeros_like(ids), at::ones_like(ids));
  CHECK(out.sizes() == std::vector<int64_t>{2, 6, 50});
  CHECK_THROWS_WITH(model->classify(ids, at::zeros_like(ids), at::ones_like(ids)),
                    Contains("no classification head"));
}

TEST_CASE("model config errors name the key and the fix", "[models]") {
  auto with = [](const std::function<void(nlohmann::json&)>& edit) {
    auto j = tiny_model_json();
    edit(j);
    return j;
  };
  CHECK_THROWS_WITH(parse_model_config(with([](auto& j) { j["d_modle"] = 8; })),
                    Contains("model.d_modle: unknown key") && Contains("d_model"));
  CHECK_THROWS_WITH(parse_model_config(with([](auto& j) { j["heads"] = 3; })),
                    Contains("model.heads: 3 does not divide d_model 8"));
  CHECK_THROWS_WITH(parse_model_config(with([](auto& j) { j["dropout"] = "high"; })),
                    Contains("model.dropout: expected a number"));
  CHECK_THROWS_WITH(
      parse_model_config(with([](auto& j) { j["tensorized"]["ffn_in"]["out_modes"] = {4, 2}; })),
      Contains("model.tensorized.ffn_in") && Contains("8 -> 16"));
  CHECK_THROWS_WITH(
      parse_model_config(with([](auto& j) {
        j["tensorized"]["attention"]["ranks"] = {1, 5, 3, 3, 1};
      })),
      Contains("model.tensorized.attention") && Contains("exceeds its full-rank bound 4"));
  CHECK_THROWS_WITH(
      parse_model_config(with([](auto& j) { j["tensorized"]["embedding"]["emb_modes"] = {2, 2, 4}; })),
      Contains("model.tensorized.embedding") && Contains("not d_model 8"));
  CHECK_THROWS_WITH(parse_model_config(with([](auto& j) { j["tensorized"]["query"] = {}; })),
                    Contains("model.tensorized.query: unknown key"));
  // A uniform rank is capped at each bond's bound.
  const auto c = parse_model_config(tiny_model_json());
  CHECK(c.attention.ranks == std::vector<int64_t>{1, 3, 3, 3, 1});
  CHECK(c.classifier.ranks == std::vector<int64_t>{1, 2, 2, 2, 1});
}

TEST_CASE("every preset in experiments/ loads", "[models]") {
  int presets = 0;
  for (const auto& entry : std::filesystem::directory_iterator(preset(""))) {
    if (entry.path().extension() != ".json") continue;
    INFO(entry.path());
    const auto e = load_experiment(entry.path().string());
    // As recorded (to_json), it reads back as the same experiment.
    CHECK(comera::testing::reads_back(e.to_json()) == "");
    if (e.model.kind == "dlrm") continue;  // test_dlrm.cpp loads those
    CHECK(e.model.kind == "transformer");
    CHECK(parse_model_config(e.model.settings).any_tensorized());
    CHECK_FALSE(parse_model_config(e.model.dense().settings).any_tensorized());
    ++presets;
  }
  CHECK(presets >= 3);
  // The small preset's longer variant (docs/training.md): 24 epochs, dropout, FFN layers as
  // Kronecker products (TT matrices at rank 1), no late stage.
  const auto long_run = load_experiment(preset("small_two_encoder_long.json"));
  const auto long_config = parse_model_config(long_run.model.settings);
  CHECK(long_run.training.epochs == 24);
  CHECK(long_config.dropout == 0.1);
  CHECK(long_config.ffn_in.format == "ttm");
  CHECK(long_config.ffn_in.ranks == std::vector<int64_t>{1, 1, 1, 1});
  CHECK(long_config.embedding.ranks == std::vector<int64_t>{1, 23, 23, 23, 1});
  CHECK_FALSE(long_run.training.late.enabled);
  const auto e = load_experiment(preset("mnli_six_encoder.json"));
  CHECK(e.training.batch_size == 32);
  CHECK(e.training.optimizer.lr_cores == 1e-4);
  CHECK(e.training.optimizer.lr_ranks == 1e-3);
  CHECK(e.training.optimizer.lr_other == 5e-5);
  CHECK(e.training.late.enabled);
  CHECK(e.training.late.start_epoch == 20);
}

TEST_CASE("dropout drops a fraction p, scales the rest, and is reproducible", "[models]") {
  for (const bool fast : {true, false}) {
    INFO("fast kernels " << fast);
    const FastKernelsGuard kernels(fast);
    const auto x = at::rand({400, 500}, at::kDouble) + 1;  // no zeros
    at::manual_seed(7);
    const auto y = fast_dropout(x, 0.1, true);
    const double dropped = (y == 0).to(at::kDouble).mean().item<double>();
    CHECK(std::abs(dropped - 0.1) < 0.003);  // 200,000 draws: std 0.00067
    const auto kept = y != 0;
    CHECK(at::allclose(y.masked_select(kept), x.masked_select(kept) / 0.9));
    at::manual_seed(7);
    CHECK(at::equal(fast_dropout(x, 0.1, true), y));
    CHECK_FALSE(at::equal(fast_dropout(x, 0.1, true), y));  // the generator moved on
    CHECK(fast_dropout(x, 0.1, false).is_same(x));
    // Neighbouring elements are independent: P(both dropped) = p^2.
    const auto a = (y.narrow(1, 0, 250) == 0).to(at::kDouble), b = (y.narrow(1, 250, 250) == 0).to(at::kDouble);
    const auto a2 = (y.slice(1, 0, 500, 2) == 0).to(at::kDouble), b2 = (y.slice(1, 1, 500, 2) == 0).to(at::kDouble);
    CHECK(std::abs((a * b).mean().item<double>() - 0.01) < 0.002);
    CHECK(std::abs((a2 * b2).mean().item<double>() - 0.01) < 0.002);
    // The gradient is the same mask and scale.
    auto leaf = x.clone().requires_grad_();
    at::manual_seed(7);
    fast_dropout(leaf, 0.1, true).sum().backward();
    CHECK(at::allclose(leaf.grad(), (y != 0).to(at::kDouble) / 0.9));
  }
}

TEST_CASE("residual dropout is x + dropout(f), its gradient the forward's mask", "[models]") {
  for (const bool fast : {true, false}) {
    INFO("fast kernels " << fast);
    const FastKernelsGuard kernels(fast);
    const auto x = at::randn({300, 701}, at::kDouble);
    const auto f = at::rand({300, 701}, at::kDouble) + 1;  // no zeros
    auto xl = x.clone().requires_grad_(), fl = f.clone().requires_grad_();
    const auto y = residual_dropout(xl, fl, 0.1, true);
    const auto kept = (y != x).to(at::kDouble);  // a dropped element leaves x exactly
    CHECK(std::abs(1 - kept.mean().item<double>() - 0.1) < 0.003);  // 210,300 draws
    // Slow reference: plain ATen ops with the mask read off the output.
    auto xr = x.clone().requires_grad_(), fr = f.clone().requires_grad_();
    const auto ref = xr + fr * kept / 0.9;
    CHECK(at::allclose(y, ref, 1e-12, 1e-12));
    const auto g = at::randn_like(x);
    y.backward(g);
    ref.backward(g);
    CHECK(at::allclose(xl.grad(), xr.grad()));
    CHECK(at::allclose(fl.grad(), fr.grad(), 1e-12, 1e-12));
    CHECK(residual_dropout(x, f, 0.1, false).equal(x + f));
  }
}

TEST_CASE("residual layer norm equals float64 LayerNorm(x + dropout(f)), gradients included",
          "[models]") {
  // Rows of 50 (off the 16-lane vectors) and 768; dropout on and off; fast kernels on (the fused
  // node, where the CPU has AVX-512) and off (residual_dropout, then ATen's layer_norm).
  for (const int64_t D : {int64_t{50}, int64_t{768}})
    for (const double p : {0.0, 0.2})
      for (const bool fast : {true, false}) {
        INFO("D " << D << " p " << p << " fast kernels " << fast);
        const FastKernelsGuard kernels(fast);
        const auto x = at::randn({3, 37, D}, at::kDouble), f = at::randn({3, 37, D}, at::kDouble);
        const auto w = at::randn({D}, at::kDouble), b = at::randn({D}, at::kDouble);
        const auto g = at::randn({3, 37, D}, at::kDouble);
        auto xl = x.to(at::kFloat).requires_grad_(), fl = f.to(at::kFloat).requires_grad_(),
             wl = w.to(at::kFloat).requires_grad_(), bl = b.to(at::kFloat).requires_grad_();
        at::manual_seed(17);
        const auto y = residual_layer_norm(xl, fl, p, true, wl, bl, 1e-5);
        y.backward(g.to(at::kFloat));
        // The same mask: the first seed drawn after manual_seed(17).
        at::manual_seed(17);
        const auto m = p > 0 ? DropoutMask(p).multipliers_like(x) : at::ones_like(x);
        auto xr = x.clone().requires_grad_(), fr = f.clone().requires_grad_(),
             wr = w.clone().requires_grad_(), br = b.clone().requires_grad_();
        const auto r = xr + m * fr;
        const auto mean = r.mean(-1, true), var = (r - mean).pow(2).mean(-1, true);
        const auto ref = (r - mean) / (var + 1e-5).sqrt() * wr + br;
        ref.backward(g);
        const auto close = [](const at::Tensor& got, const at::Tensor& want) {
          const double scale = std::max(1.0, want.abs().max().item<double>());
          return (got.to(at::kDouble) - want).abs().max().item<double>() <= 2e-5 * scale;
        };
        CHECK(close(y, ref));
        CHECK(close(xl.grad(), xr.grad()));
        CHECK(close(fl.grad(), fr.grad()));
        CHECK(close(wl.grad(), wr.grad()));
        CHECK(close(bl.grad(), br.grad()));
      }
  // Not training: the plain sum, whatever p.
  const auto x = at::randn({4, 16}), f = at::randn({4, 16}), w = at::ones({16}), b = at::zeros({16});
  CHECK(at::allclose(residual_layer_norm(x, f, 0.5, false, w, b, 1e-5),
                     at::layer_norm(x + f, {16}, w, b, 1e-5), 1e-5, 1e-5));
}

TEST_CASE("the composite dropout mask equals the fast one bit for bit", "[models]") {
  // Seeds with the top bit set and not, sizes off the blocks of four (and of the eight draws
  // hashed at once), p off the 1/65536 grid and one rounding to 65536 (nothing kept).
  for (const uint64_t seed : {0ull, 12345ull, 0x8000000000000001ull, 0xFFFFFFFFFFFFFFFFull})
    for (const double p : {0.1, 0.5, 0.9, 0.999995})
      for (const int64_t n : {1, 7, 4099}) {
        INFO("seed " << seed << " p " << p << " n " << n);
        const DropoutMask mask(p, seed);
        for (const auto dtype : {at::kFloat, at::kDouble}) {
          auto want = at::empty({n}, dtype);
          if (dtype == at::kFloat)
            mask.multipliers(0, n, want.data_ptr<float>());
          else
            mask.multipliers(0, n, want.data_ptr<double>());
          CHECK(at::equal(mask.multipliers_like(at::zeros({n}, dtype)), want));
        }
      }
  // Dropout and residual dropout, forward and gradient, non-contiguous inputs included.
  const auto x = at::randn({37, 61}, at::kDouble).t(), f = at::randn({61, 37}, at::kDouble);
  auto run = [&](bool fast) {
    const FastKernelsGuard kernels(fast);
    auto xl = x.clone().requires_grad_(), fl = f.clone().requires_grad_();
    at::manual_seed(5);
    const auto y = fast_dropout(xl, 0.3, true);
    const auto r = residual_dropout(xl, fl, 0.3, true);
    (y.sum() + (r * r).sum()).backward();
    return std::vector<at::Tensor>{y, r, xl.grad(), fl.grad()};
  };
  const auto fast = run(true), composite = run(false);
  for (size_t i = 0; i < fast.size(); ++i) CHECK(at::equal(fast[i], composite[i]));
  // Other dtypes take the composite path with the same mask.
  at::manual_seed(5);
  const auto half = fast_dropout(x.abs().add(1).to(at::kHalf), 0.3, true);
  CHECK(at::equal(half == 0, fast[0] == 0));
}

TEST_CASE("the dropout mask: keep rate 1-p, and any range drawn alone matches the whole",
          "[models]") {
  const DropoutMask mask(0.25, 12345);
  std::vector<float> whole(600000), part(599993);
  mask.multipliers(0, 600000, whole.data());
  mask.multipliers(7, 599993, part.data());  // starts inside a block of four
  CHECK(std::equal(part.begin(), part.end(), whole.begin() + 7));
  const auto dropped = std::count(whole.begin(), whole.end(), 0.0f);
  CHECK(std::abs(static_cast<double>(dropped) / 600000 - 0.25) < 0.003);  // std 0.00056
  CHECK(std::count(whole.begin(), whole.end(), static_cast<float>(1 / 0.75)) == 600000 - dropped);
}

TEST_CASE("attention core equals dropout(softmax(scale q k^T + bias)) v, gradients included",
          "[models]") {
  // T = 13: most probability rows start inside a 4-element block of the mask generator; the
  // second shape is large enough for the products to split the heads across threads. Head sizes
  // 16, 48 and 64 take the thin float32 kernels, with T off their row blocks and column vectors.
  for (const auto& shape : std::vector<std::array<int64_t, 4>>{
           {3, 13, 2, 5}, {2, 72, 3, 40}, {2, 37, 2, 16}, {2, 29, 1, 48}, {2, 70, 2, 64}}) {
    const int64_t B = shape[0], T = shape[1], h = shape[2], dh = shape[3], D = h * dh;
    const double p = 0.25;
    auto padding = at::ones({B, T}, at::kLong);
    padding[1].narrow(0, 9, 4).fill_(0);
    const auto q = at::randn({B, T, D}, at::kDouble), k = at::randn({B, T, D}, at::kDouble),
               v = at::randn({B, T, D}, at::kDouble), g = at::randn({B, T, D}, at::kDouble);
    auto split = [&](const at::Tensor& t) { return t.view({B, T, h, dh}).permute({0, 2, 1, 3}); };
    for (const bool fast : {true, false})
      for (const bool train : {true, false})
        for (const auto dtype : {at::kDouble, at::kFloat}) {
          INFO("fast kernels " << fast << " train " << train << " dtype " << dtype);
          const FastKernelsGuard kernels(fast);
          auto ql = q.clone().to(dtype).requires_grad_(), kl = k.clone().to(dtype).requires_grad_(),
               vl = v.clone().to(dtype).requires_grad_();
          at::manual_seed(11);
          const double scale = 0.7;
          const auto y = attention_core(ql, kl, vl, attention_mask_bias(padding, dtype), h, p, train, scale);
          // The core's mask: the first seed drawn after manual_seed(11), in (B, h, T, T) order.
          at::manual_seed(11);
          auto m = at::ones({B, h, T, T}, at::kDouble);
          if (train) DropoutMask(p).multipliers(0, m.numel(), m.data_ptr<double>());
          // Slow reference: plain ATen ops in float64.
          auto qr = q.clone().requires_grad_(), kr = k.clone().requires_grad_(),
               vr = v.clone().requires_grad_();
          const auto probs = at::softmax(
              at::matmul(split(qr), split(kr).transpose(-2, -1)) * scale + attention_mask_bias(padding, at::kDouble), -1);
          const auto ref = at::matmul(probs * m, split(vr)).permute({0, 2, 1, 3}).reshape({B, T, D});
          // Within tol of the largest reference entry: float32 rounding grows with the sums' length.
          const double tol = dtype == at::kDouble ? 1e-12 : 1e-5;
          auto close = [&](const at::Tensor& got, const at::Tensor& want) {
            const double scale = std::max(1.0, want.abs().max().item<double>());
            return (got.to(at::kDouble) - want).abs().max().item<double>() <= tol * scale;
          };
          CHECK(close(y, ref));
          y.backward(g.to(dtype));
          ref.backward(g);
          CHECK(close(ql.grad(), qr.grad()));
          CHECK(close(kl.grad(), kr.grad()));
          CHECK(close(vl.grad(), vr.grad()));
        }
  }
}
