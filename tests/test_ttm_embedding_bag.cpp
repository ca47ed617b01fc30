// TTMEmbeddingBag against bags pooled by hand from rows of the densely reconstructed table
// (float64 autograd): sum and mean, empty bags, per-sample weights, 1-D and 2-D indices; the
// optimised lookup (dedup on and off, fast kernels on and off) against the naive one.
#include "core/kernels/fast_kernels.h"
#include "core/layers/size.h"
#include "core/layers/ttm_embedding_bag.h"
#include "core/util/error.h"
#include "tests/support/catch.h"
#include "tests/support/ttm_reference.h"

#include <ATen/ATen.h>
#include <torch/autograd.h>
#include <torch/nn/module.h>

using namespace comera;
using Catch::Matchers::Contains;
using comera::testing::dense_table;

namespace {

std::vector<at::Tensor> params_of(TTMEmbeddingBagImpl& bag) {
  auto p = bag.table().cores();
  for (const auto& d : bag.table().rank_vectors()) p.push_back(d);
  return p;
}

double max_diff(const at::Tensor& a, const at::Tensor& b) { return (a - b).abs().max().item<double>(); }

// Bag b = indices[offsets[b] .. offsets[b+1]) pooled one row at a time.
at::Tensor pooled_by_hand(const at::Tensor& table, const std::vector<int64_t>& indices,
                          const std::vector<int64_t>& offsets, const std::vector<double>& weights,
                          bool mean) {
  std::vector<at::Tensor> bags;
  for (size_t b = 0; b < offsets.size(); ++b) {
    const int64_t begin = offsets[b];
    const int64_t end = b + 1 < offsets.size() ? offsets[b + 1] : static_cast<int64_t>(indices.size());
    at::Tensor acc = at::zeros({table.size(1)}, table.options());
    for (int64_t i = begin; i < end; ++i)
      acc = acc + table[indices[i]] * (weights.empty() ? 1.0 : weights[i]);
    if (mean && end > begin) acc = acc / static_cast<double>(end - begin);
    bags.push_back(acc);
  }
  return at::stack(bags);
}

TTMEmbeddingBag make_bag(BagMode mode) {
  // 50 rows in modes 3x4x5 = 60: the padding rows exist but are never addressed.
  TTMEmbeddingBag bag(TTMEmbeddingBagOptions(50, 12)
                          .vocab_modes({3, 4, 5})
                          .emb_modes({2, 3, 2})
                          .ranks({1, 3, 4, 1})
                          .mode(mode));
  bag->to(at::kDouble);
  at::NoGradGuard no_grad;
  for (auto& d : bag->table().rank_vectors()) {
    d.uniform_(0.5, 1.5);
    d[0] = 1e-3;  // pruned
  }
  return bag;
}

}  // namespace

TEST_CASE("TTM embedding bag equals bags of dense rows, gradients agree on every path",
          "[ttm_embedding_bag]") {
  // Repeats (7 three times), an empty bag in the middle and one at the end.
  const std::vector<int64_t> indices = {7, 3, 7, 49, 0, 7, 12, 12, 31};
  const std::vector<int64_t> offsets = {0, 2, 2, 5, 9};
  const std::vector<double> weights = {0.5, -1, 2, 0.25, 1.5, -0.5, 3, 1, -2};
  for (const auto mode : {BagMode::Sum, BagMode::Mean})
    for (const bool weighted : {false, true}) {
      if (weighted && mode == BagMode::Mean) continue;
      INFO("mode " << bag_mode_name(mode) << (weighted ? ", weighted" : ""));
      torch::manual_seed(3);
      auto bag = make_bag(mode);
      const auto params = params_of(*bag);
      const at::Tensor expected = pooled_by_hand(dense_table(bag->table()), indices, offsets,
                                                 weighted ? weights : std::vector<double>{},
                                                 mode == BagMode::Mean);
      const at::Tensor probe = at::randn(expected.sizes(), at::kDouble);
      const auto g_ref = torch::autograd::grad({(expected * probe).sum()}, params);
      const auto idx = at::tensor(indices, at::kLong), off = at::tensor(offsets, at::kLong);
      const auto w = weighted ? at::tensor(weights, at::kDouble) : at::Tensor();
      for (const bool fast : {true, false})
        for (int path = 0; path < 3; ++path) {
          INFO("fast kernels " << fast << ", path " << (path == 0 ? "dedup" : path == 1 ? "no dedup" : "naive"));
          const FastKernelsGuard kernels(fast);
          bag->table().options.dedup(path == 0);
          const auto out = path == 2 ? bag->forward_naive(idx, off, w) : bag->forward(idx, off, w);
          REQUIRE(out.sizes() == expected.sizes());
          CHECK(max_diff(out, expected) < 1e-12);
          CHECK(out[1].abs().max().item<double>() == 0.0);  // empty bags are zero
          CHECK(out[4].abs().max().item<double>() == 0.0);
          const auto g = torch::autograd::grad({(out * probe).sum()}, params);
          for (size_t p = 0; p < params.size(); ++p) CHECK(max_diff(g[p], g_ref[p]) < 1e-10);
        }
    }
}

TEST_CASE("TTM embedding bag takes 2-D indices, include_last_offset and all-empty batches",
          "[ttm_embedding_bag]") {
  torch::manual_seed(5);
  auto bag = make_bag(BagMode::Mean);
  const auto table = dense_table(bag->table());
  const auto ids = at::tensor({1, 2, 3, 40, 41, 42}, at::kLong);
  const auto expected = pooled_by_hand(table, {1, 2, 3, 40, 41, 42}, {0, 3}, {}, true);
  CHECK(max_diff(bag->forward(ids.view({2, 3})), expected) < 1e-12);
  bag->options.include_last_offset(true);
  CHECK(max_diff(bag->forward(ids, at::tensor({0, 3, 6}, at::kLong)), expected) < 1e-12);
  bag->options.include_last_offset(false);
  const auto none = bag->forward(at::zeros({0}, at::kLong), at::zeros({3}, at::kLong));
  REQUIRE(none.sizes() == at::IntArrayRef({3, 12}));
  CHECK(none.abs().max().item<double>() == 0.0);
}

TEST_CASE("TTM embedding bag factorises its table automatically, padding the rows up",
          "[ttm_embedding_bag]") {
  TTMEmbeddingBag bag(TTMEmbeddingBagOptions(10131227, 16).rank(8));
  const auto& shape = bag->table().shape();
  CHECK(shape.d() == 3);
  CHECK(shape.vocab() == 10131227);
  CHECK(shape.padded_vocab() >= 10131227);
  CHECK(shape.padded_vocab() < 10131227 * 1.05);  // balanced modes waste little
  CHECK(shape.dim() == 16);
  CHECK(shape.ranks() == std::vector<int64_t>{1, 8, 8, 1});
  CHECK(bag->options.vocab_modes() == shape.vocab_modes());
  // Size accounting and truncation see the table (a TTMEmbedding) inside the bag.
  const auto size = model_size(*bag);
  REQUIRE(size.layers.size() == 1);
  CHECK(size.layers[0].dense_equivalent == 10131227LL * 16);
  CHECK(size.compression() > 1000);
}

TEST_CASE("TTM embedding bag rejects bad input with the fix", "[ttm_embedding_bag]") {
  TTMEmbeddingBag bag(TTMEmbeddingBagOptions(50, 12).vocab_modes({3, 4, 5}).emb_modes({2, 3, 2}).rank(2));
  const auto ids = at::tensor({1, 2}, at::kLong);
  CHECK_THROWS_WITH(bag->forward(at::tensor({1, 50}, at::kLong), at::tensor({0}, at::kLong)),
                    Contains("id 50 is out of range"));
  CHECK_THROWS_WITH(bag->forward(ids), Contains("need 1-D offsets"));
  CHECK_THROWS_WITH(bag->forward(ids, at::tensor({1}, at::kLong)), Contains("start at 0"));
  CHECK_THROWS_WITH(bag->forward(ids.view({1, 2}), at::tensor({0}, at::kLong)), Contains("take no offsets"));
  bag->options.mode(BagMode::Mean);
  CHECK_THROWS_WITH(bag->forward(ids, at::tensor({0}, at::kLong), at::ones({2})), Contains("need mode sum"));
  CHECK_THROWS_WITH(TTMEmbeddingBag(TTMEmbeddingBagOptions(50, 12).vocab_modes({50})),
                    Contains("give both vocab_modes and emb_modes"));
  CHECK_THROWS_WITH(TTMEmbeddingBag(TTMEmbeddingBagOptions(50, 12).vocab_modes({5, 10}).emb_modes({4, 4})),
                    Contains("not embedding_dim 12"));
  CHECK_THROWS_WITH(parse_bag_mode("max"), Contains("use sum or mean"));
}

TEST_CASE("TTM embedding bag truncates physically through its table, output unchanged",
          "[ttm_embedding_bag]") {
  torch::manual_seed(9);
  auto bag = make_bag(BagMode::Sum);  // rank entry 0 of each bond pruned
  const auto idx = at::tensor({4, 9, 4, 33}, at::kLong), off = at::tensor({0, 1, 3}, at::kLong);
  const auto before = bag->forward(idx, off).detach();
  const auto result = bag->table().truncate(/*fold=*/true);
  CHECK(result.ranks_after == std::vector<int64_t>{1, 2, 3, 1});
  CHECK(bag->table().cores()[1].size(0) == 2);
  CHECK(max_diff(bag->forward(idx, off), before) < 1e-12);
  CHECK(max_diff(bag->forward_naive(idx, off), before) < 1e-12);
}
