// TTMEmbedding against a table reconstructed densely in this file (float64 autograd), and the
// optimised lookup (dedup on and off, fast kernels on and off) against the naive one.
#include "core/formats/core_chain.h"
#include "core/kernels/fast_kernels.h"
#include "core/layers/ttm_embedding.h"
#include "core/layers/ttm_lookup.h"
#include "core/util/error.h"
#include "tests/support/catch.h"
#include "tests/support/ttm_reference.h"

#include <ATen/ATen.h>
#include <torch/autograd.h>

#include <random>

using namespace comera;
using Catch::Matchers::Contains;
using comera::testing::dense_table;

namespace {

std::vector<at::Tensor> params_of(TTMEmbeddingImpl& layer) {
  auto p = layer.cores();
  for (const auto& d : layer.rank_vectors()) p.push_back(d);
  return p;
}

std::vector<at::Tensor> grads(const at::Tensor& loss, const std::vector<at::Tensor>& params) {
  return torch::autograd::grad({loss}, params);
}

double max_diff(const at::Tensor& a, const at::Tensor& b) {
  return (a - b).abs().max().item<double>();
}

struct RandomCase {
  std::vector<int64_t> v, e, ranks;
  int64_t vocab;
};

RandomCase random_case(std::mt19937& rng, int d) {
  std::uniform_int_distribution<int64_t> mode(1, 4), rank(1, 4);
  RandomCase c;
  for (int k = 0; k < d; ++k) {
    c.v.push_back(mode(rng) + 1);
    c.e.push_back(mode(rng));
  }
  std::vector<int64_t> sizes;
  for (int k = 0; k < d; ++k) sizes.push_back(c.v[k] * c.e[k]);
  const CoreChain bounds(sizes, std::vector<int64_t>(d + 1, 1), "test");
  c.ranks.assign(d + 1, 1);
  for (int k = 1; k < d; ++k) c.ranks[k] = std::min(rank(rng), bounds.max_rank(k));
  int64_t rows = 1;
  for (auto x : c.v) rows *= x;
  c.vocab = rows - std::uniform_int_distribution<int64_t>(0, rows / 3)(rng);
  return c;
}

TTMEmbedding make_layer(const RandomCase& c, bool dedup = true) {
  TTMEmbedding layer(TTMEmbeddingOptions(c.vocab, c.v, c.e, c.ranks).dedup(dedup));
  layer->to(at::kDouble);
  return layer;
}

}  // namespace

TEST_CASE("TTM lookup equals rows of the dense table, gradients agree on every path",
          "[ttm_embedding]") {
  std::mt19937 rng(7);
  for (int d = 1; d <= 4; ++d) {
    for (int trial = 0; trial < 4; ++trial) {
      const auto c = random_case(rng, d);
      torch::manual_seed(100 * d + trial);
      auto layer = make_layer(c);
      {
        // Rank vectors away from 1 (and one entry pruned) so their role is visible.
        at::NoGradGuard no_grad;
        for (auto& dv : layer->rank_vectors()) {
          dv.uniform_(0.5, 1.5);
          if (dv.numel() > 1) dv[0] = 1e-3;
        }
      }
      // 1-3 dims, with repeats: ids drawn from a pool of 4 over the whole vocabulary.
      std::vector<int64_t> dims;
      for (int i = 0; i <= trial % 3; ++i) dims.push_back(2 + trial + i);
      const at::Tensor pool = at::randint(0, c.vocab, {4}, at::kLong);
      const at::Tensor ids = pool.index_select(0, at::randint(0, 4, dims, at::kLong).view({-1}))
                                 .view(dims);
      INFO("d=" << d << " modes " << join_dims(c.v) << " x " << join_dims(c.e) << " ranks "
                << join_dims(c.ranks) << " vocab " << c.vocab);

      const at::Tensor table = dense_table(*layer);
      const at::Tensor weight = at::randn(ids.sizes().vec(), at::kDouble).unsqueeze(-1) *
                                at::randn({table.size(1)}, at::kDouble);
      const auto params = params_of(*layer);
      const at::Tensor expected = table.index_select(0, ids.reshape({-1})).view(weight.sizes());
      const auto g_ref = grads((expected * weight).sum(), params);

      for (const bool fast : {true, false})
        for (int path = 0; path < 3; ++path) {
          INFO("fast kernels " << fast << ", path "
                               << (path == 0 ? "dedup" : path == 1 ? "no dedup" : "naive"));
          const FastKernelsGuard kernels(fast);
          layer->options.dedup(path == 0);
          const at::Tensor out = path == 2 ? layer->forward_naive(ids) : layer->forward(ids);
          REQUIRE(out.sizes() == expected.sizes());
          CHECK(max_diff(out, expected) < 1e-12);
          const auto g = grads((out * weight).sum(), params);
          for (size_t p = 0; p < params.size(); ++p) CHECK(max_diff(g[p], g_ref[p]) < 1e-10);
        }
      // Pruned entries get no gradient.
      const auto g = grads((layer->forward(ids) * weight).sum(), params);
      for (size_t k = 0; k + 1 < static_cast<size_t>(d); ++k)
        if (layer->rank_vectors()[k].numel() > 1) CHECK(g[d + k][0].item<double>() == 0.0);
    }
  }
}

TEST_CASE("TTM lookup in float32 matches the float64 table", "[ttm_embedding]") {
  torch::manual_seed(3);
  TTMEmbedding layer(TTMEmbeddingOptions(1000, {10, 10, 10}, {4, 2, 4}, {1, 6, 5, 1}));
  const at::Tensor ids = at::randint(0, 1000, {64}, at::kLong);
  const at::Tensor weight = at::randn({64, layer->shape().dim()});
  std::vector<at::Tensor> outs, core_grads;
  for (const bool fast : {true, false}) {
    const FastKernelsGuard kernels(fast);
    const at::Tensor out = layer->forward(ids);
    outs.push_back(out.to(at::kDouble));
    const auto g = grads((out * weight).sum(), layer->cores());
    core_grads.insert(core_grads.end(), g.begin(), g.end());
  }
  layer->to(at::kDouble);
  const at::Tensor expected = dense_table(*layer).index_select(0, ids);
  const auto g_ref = grads((expected * weight.to(at::kDouble)).sum(), layer->cores());
  const size_t n = g_ref.size();
  for (size_t path = 0; path < outs.size(); ++path) {
    INFO("fast kernels " << (path == 0));
    CHECK(max_diff(outs[path], expected) < 1e-5);
    for (size_t k = 0; k < n; ++k) CHECK(max_diff(core_grads[path * n + k].to(at::kDouble), g_ref[k]) < 1e-4);
  }
}

TEST_CASE("TTM truncation leaves outputs unchanged and shrinks the parameters",
          "[ttm_embedding]") {
  for (bool fold : {false, true}) {
    INFO("fold " << fold);
    torch::manual_seed(11);
    TTMEmbedding layer(TTMEmbeddingOptions(300, {4, 5, 4, 4}, {2, 3, 2, 2}, {1, 6, 7, 5, 1}));
    layer->to(at::kDouble);
    {
      at::NoGradGuard no_grad;
      auto ds = layer->rank_vectors();
      ds[0].uniform_(0.5, 2);
      ds[0].index_fill_(0, at::tensor({1, 4}, at::kLong), 0.0);  // r1: 6 -> 4
      ds[1].index_fill_(0, at::tensor({0, 2, 6}, at::kLong), 1e-3);  // r2: 7 -> 4
    }
    const at::Tensor ids = at::randint(0, 300, {5, 7}, at::kLong);
    const at::Tensor before = layer->forward(ids);
    const auto core0 = layer->cores()[0];
    const auto result = layer->truncate(fold);
    CHECK(result.ranks_before == std::vector<int64_t>{1, 6, 7, 5, 1});
    CHECK(result.ranks_after == std::vector<int64_t>{1, 4, 4, 5, 1});
    CHECK(layer->shape().ranks() == result.ranks_after);
    CHECK(layer->cores()[0].is_same(core0));  // same Variable, sliced in place
    // cores 1*8*4 + 4*15*4 + 4*8*5 + 5*8*1, rank vectors 4 + 4 + 5
    int64_t params = 0;
    for (const auto& p : layer->parameters()) params += p.numel();
    CHECK(params == 32 + 240 + 160 + 40 + 13);
    CHECK(max_diff(layer->forward(ids), before) < 1e-10);
    CHECK(max_diff(layer->forward_naive(ids), before) < 1e-10);
    // Slices: d1, d2 on dim 0; core0 dim 3; core1 dims 0 and 3; core2 dim 0.
    CHECK(result.slices.size() == 5);
    for (const auto& s : result.slices)
      for (const auto& [dim, index] : s.kept) CHECK(s.param.size(dim) == index.numel());
    if (fold)
      for (const auto& d : layer->rank_vectors()) CHECK(d.eq(1).all().item<bool>());
  }
}

TEST_CASE("TTM truncation of an empty bond leaves an all-zero table", "[ttm_embedding]") {
  torch::manual_seed(5);
  TTMEmbedding layer(TTMEmbeddingOptions(60, {3, 4, 5}, {2, 2, 2}, {1, 3, 4, 1}));
  layer->to(at::kDouble);
  {
    at::NoGradGuard no_grad;
    layer->rank_vectors()[1].fill_(1e-4);
  }
  const at::Tensor ids = at::arange(60, at::kLong);
  CHECK(layer->forward(ids).abs().max().item<double>() == 0.0);
  const auto result = layer->truncate(true);
  // Every bond keeps one slice; the dead bond keeps its pruned entry.
  CHECK(result.ranks_after == std::vector<int64_t>{1, 1, 1, 1});
  CHECK(layer->forward(ids).abs().max().item<double>() == 0.0);
  CHECK(layer->rank_vectors()[1].item<double>() == Approx(1e-4));
  int64_t params = 0;
  for (const auto& p : layer->parameters()) params += p.numel();
  CHECK(params == 3 * 2 + 4 * 2 + 5 * 2 + 2);
}

TEST_CASE("TTM ids out of range or not integers give a clear error", "[ttm_embedding]") {
  TTMEmbedding layer(TTMEmbeddingOptions(30522, {16, 20, 10, 10}, {4, 4, 8, 6}, {1, 4, 4, 4, 1}));
  CHECK_THROWS_WITH(layer->forward(at::tensor({3, 30522, 7})),
                    Contains("id 30522 is out of range") && Contains("vocabulary of 30522"));
  CHECK_THROWS_WITH(layer->forward_naive(at::tensor({-1, 2})), Contains("id -1 is out of range"));
  CHECK_THROWS_AS(layer->forward(at::tensor({1.0, 2.0})), Error);
  CHECK_THROWS_WITH(layer->forward(at::tensor({1.0, 2.0})), Contains("integer tensor"));
  CHECK(layer->forward(at::tensor({3, 30521}, at::kInt)).sizes() == at::IntArrayRef{2, 768});
}

TEST_CASE("TTM initial table entries have variance 1 whatever the ranks", "[ttm_embedding]") {
  for (const auto& ranks : {std::vector<int64_t>{1, 2, 3, 1}, std::vector<int64_t>{1, 8, 16, 1}}) {
    double mean_var = 0;
    const int seeds = 16;
    for (int seed = 0; seed < seeds; ++seed) {
      torch::manual_seed(seed);
      TTMEmbedding layer(TTMEmbeddingOptions(4096, {16, 16, 16}, {8, 8, 8}, ranks));
      layer->to(at::kDouble);
      mean_var += dense_table(*layer).var().item<double>() / seeds;
    }
    INFO("ranks " << join_dims(ranks));
    CHECK(std::abs(mean_var - 1.0) < 0.1);
  }
}

TEST_CASE("TTM pretty_print names the shape", "[ttm_embedding]") {
  TTMEmbedding layer(TTMEmbeddingOptions(30522, {16, 20, 10, 10}, {4, 4, 8, 6}, {1, 32, 32, 32, 1}));
  std::ostringstream os;
  os << *layer;
  CHECK(os.str() ==
        "comera::TTMEmbedding(vocab=30522, dim=768, modes=[16,20,10,10]x[4,4,8,6], "
        "ranks=[1,32,32,32,1], dedup=true)");
}

TEST_CASE("TTM merged lookup: whole half tables and only the rows used agree with the naive chain",
          "[ttm_embedding]") {
  std::mt19937 rng(11);
  for (int d = 2; d <= 4; ++d)
    for (int trial = 0; trial < 3; ++trial) {
      const auto c = random_case(rng, d);
      torch::manual_seed(10 * d + trial);
      std::vector<at::Tensor> cores;
      for (int k = 0; k < d; ++k)
        cores.push_back(at::randn({c.ranks[k], c.v[k], c.e[k], c.ranks[k + 1]}, at::kDouble).requires_grad_());
      // Few ids with repeats (the used rows are a small part of each half), and every id.
      for (const int64_t count : {int64_t{3}, c.vocab}) {
        const at::Tensor ids = count == c.vocab ? at::arange(c.vocab, at::kLong)
                                                : at::randint(0, c.vocab, {count}, at::kLong).repeat({2});
        INFO("d=" << d << " modes " << join_dims(c.v) << " x " << join_dims(c.e) << " ranks "
                  << join_dims(c.ranks) << ", " << ids.numel() << " ids");
        const at::Tensor expected = naive_rows(cores, ids);
        const at::Tensor weight = at::randn(expected.sizes(), at::kDouble);
        const auto g_ref = grads((expected * weight).sum(), cores);
        for (const auto choice : {MergeChoice::Auto, MergeChoice::Full, MergeChoice::Used})
          for (const bool fast : {true, false}) {
            INFO("choice " << static_cast<int>(choice) << ", fast kernels " << fast);
            const FastKernelsGuard kernels(fast);
            const at::Tensor out = merged_rows(cores, ids, choice);
            REQUIRE(out.sizes() == expected.sizes());
            CHECK(max_diff(out, expected) < 1e-12);
            const auto g = grads((out * weight).sum(), cores);
            for (int k = 0; k < d; ++k) CHECK(max_diff(g[k], g_ref[k]) < 1e-10);
            // float32 (the fused kernel's narrow-row path differs by width): to float precision.
            std::vector<at::Tensor> cores32;
            for (const auto& core : cores) cores32.push_back(core.detach().to(at::kFloat).requires_grad_());
            const at::Tensor out32 = merged_rows(cores32, ids, choice);
            const double scale = expected.abs().max().item<double>() + 1;
            CHECK(max_diff(out32.to(at::kDouble), expected) < 1e-5 * scale);
            const auto g32 = grads((out32 * weight.to(at::kFloat)).sum(), cores32);
            for (int k = 0; k < d; ++k)
              CHECK(max_diff(g32[k].to(at::kDouble), g_ref[k]) < 1e-4 * (g_ref[k].abs().max().item<double>() + 1));
          }
      }
    }
}

TEST_CASE("the fused pair kernel matches chain_rows with ids repeating, rows split between threads",
          "[ttm_embedding]") {
  // Two threads give each part of the ids its own left and right rows of the gradients; rows
  // repeat across parts' natural boundaries, right widths narrow (run transposed) and wide.
  const FastKernelsGuard kernels(true);
  const int saved_threads = at::get_num_threads();
  for (const int threads : {1, 2})
    for (const int64_t er : {int64_t{2}, int64_t{6}, int64_t{20}})
      for (const auto dtype : {at::kDouble, at::kFloat}) {
        INFO("threads " << threads << ", right width " << er << ", dtype " << dtype);
        at::set_num_threads(threads);
        at::manual_seed(er);
        const int64_t vl = 7, vr = 9, el = 12, r = 5, n = 301;
        const auto left = at::randn({vl, 1, el, r}, at::kDouble), right = at::randn({vr, r, er, 1}, at::kDouble);
        // Skewed ids: most rows of both tables are hit many times, some never.
        const auto ia = at::randint(0, vl - 1, {n}, at::kLong).pow(2).remainder(vl - 1);
        const auto ib = at::randint(0, vr, {n}, at::kLong).div(2, "floor");
        const auto weight = at::randn({n, el * er}, at::kDouble);
        const auto l = left.to(dtype).requires_grad_(), rr = right.to(dtype).requires_grad_();
        const auto out = pair_rows(l, rr, ia, ib);
        const auto g = grads((out * weight.to(dtype)).sum(), {l, rr});
        const auto lref = left.clone().requires_grad_(), rref = right.clone().requires_grad_();
        const auto ref = chain_rows({lref, rref}, {ia, ib});
        const auto gref = grads((ref * weight).sum(), {lref, rref});
        const double tol = dtype == at::kDouble ? 1e-10 : 1e-3;
        CHECK(max_diff(out.to(at::kDouble), ref) < tol);
        CHECK(max_diff(g[0].to(at::kDouble), gref[0]) < tol);
        CHECK(max_diff(g[1].to(at::kDouble), gref[1]) < tol);
      }
  at::set_num_threads(saved_threads);
}
