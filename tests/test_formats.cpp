// TTShape / TTMShape validation and factorization proposals, against hand-computed values.
#include "core/formats/factorize.h"
#include "core/formats/tt_shape.h"
#include "core/formats/ttm_shape.h"
#include "core/util/error.h"
#include "tests/support/catch.h"

#include <algorithm>

using namespace comera;
using Catch::Matchers::Contains;

TEST_CASE("TTShape counts the paper's attention layer by hand", "[formats]") {
  TTShape s({12, 8, 8}, {8, 8, 12}, {1, 12, 30, 30, 30, 12, 1});
  // 1*12*12 + 12*8*30 + 30*8*30 + 30*8*30 + 30*8*12 + 12*12*1
  CHECK(s.params() == 144 + 2880 + 7200 + 7200 + 2880 + 144);
  CHECK(s.params() == 20448);
  CHECK(s.in_features() == 768);
  CHECK(s.out_features() == 768);
  CHECK(s.chain().max_rank(1) == 12);
  CHECK(s.chain().max_rank(3) == 768);
}

TEST_CASE("TTMShape counts the paper's embedding by hand", "[formats]") {
  TTMShape s(30522, {16, 20, 10, 10}, {4, 4, 8, 6}, {1, 32, 32, 32, 1});
  // 1*64*32 + 32*80*32 + 32*80*32 + 32*60*1
  CHECK(s.params() == 2048 + 81920 + 81920 + 1920);
  CHECK(s.params() == 167808);
  CHECK(s.padded_vocab() == 32000);
  CHECK(s.dim() == 768);
}

TEST_CASE("TTShape validation errors name the problem", "[formats]") {
  CHECK_THROWS_WITH(TTShape::for_features(768, 768, {12, 8, 8}, {8, 8, 10}, {1, 2, 2, 2, 2, 2, 1}),
                    Contains("multiply to 768 -> 640") && Contains("768 -> 768"));
  CHECK_THROWS_WITH(TTShape({12, 0, 8}, {8, 8, 12}, {1, 2, 2, 2, 2, 2, 1}),
                    Contains("mode 1 is 0"));
  CHECK_THROWS_WITH(TTShape({12, 8, 8}, {8, 8, 12}, {1, 2, 0, 2, 2, 2, 1}),
                    Contains("rank r_2 = 0 is below 1"));
  CHECK_THROWS_WITH(TTShape({12, 8, 8}, {8, 8, 12}, {1, 2, 2, 1}),
                    Contains("ranks list has 4 entries") && Contains("expected 7"));
  CHECK_THROWS_WITH(TTShape({12, 8, 8}, {8, 8, 12}, {1, 13, 30, 30, 30, 12, 1}),
                    Contains("r_1 = 13 exceeds its full-rank bound 12"));
  CHECK_THROWS_WITH(TTShape({12, 8, 8}, {8, 8, 12}, {2, 12, 30, 30, 30, 12, 1}),
                    Contains("boundary ranks must be 1"));
  CHECK_THROWS_WITH(TTShape({12, 8}, {8, 8, 12}, {1, 2, 2, 2, 1}),
                    Contains("2 input modes but 3 output modes"));
  CHECK_THROWS_WITH(TTMShape(40000, {16, 20, 10, 10}, {4, 4, 8, 6}, {1, 32, 32, 32, 1}),
                    Contains("vocabulary of 40000 rows does not fit the 32000 rows"));
}

TEST_CASE("uniform ranks are capped at the full-rank bound", "[formats]") {
  auto s = TTShape::uniform({12, 8, 8}, {8, 8, 12}, 30);
  CHECK(s.ranks() == std::vector<int64_t>{1, 12, 30, 30, 30, 12, 1});
  auto f = TTShape::uniform({12, 8, 8}, {12, 16, 16}, 30);
  CHECK(f.ranks() == std::vector<int64_t>{1, 12, 30, 30, 30, 16, 1});
}

TEST_CASE("factorization proposals include the paper's shapes", "[formats]") {
  auto contains = [](const auto& props, std::vector<int64_t> a, std::vector<int64_t> b) {
    return std::any_of(props.begin(), props.end(),
                       [&](const auto& p) { return p.first == a && p.second == b; });
  };
  CHECK(contains(propose_tt_modes(768, 768, 3), std::vector<int64_t>{12, 8, 8},
                 std::vector<int64_t>{8, 8, 12}));
  CHECK(contains(propose_tt_modes(768, 3072, 3), std::vector<int64_t>{12, 8, 8},
                 std::vector<int64_t>{12, 16, 16}));
  CHECK(contains(propose_tt_modes(3072, 768, 3), std::vector<int64_t>{16, 16, 12},
                 std::vector<int64_t>{8, 8, 12}));
  for (const auto& f : balanced_factorizations(360, 3)) CHECK(f[0] * f[1] * f[2] == 360);
  CHECK(balanced_factorizations(12, 2).size() == 3);  // 12x1, 6x2, 4x3
  CHECK(balanced_factorizations(12, 2).front() == std::vector<int64_t>{4, 3});
}
