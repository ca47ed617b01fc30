// The fused CPU kernels against float64 ATen: the attention's row softmax with a bias row (every
// row length through the vector width's tails, padding bias, wide score ranges) and its
// softmax-and-dropout backward, the fused GELU with its gradient, the tiled transpose, and the
// bf16 thin GEMMs, and the bf16 row conversions against c10's scalar ones.
#include "core/kernels/cpu/bf16_rows.h"
#include "core/kernels/cpu/cpu_features.h"
#include "core/kernels/cpu/gelu.h"
#include "core/kernels/cpu/softmax_rows.h"
#include "core/kernels/cpu/thin_gemm_bf16.h"
#include "core/kernels/cpu/transpose.h"
#include "tests/support/catch.h"

#include <ATen/ATen.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

TEST_CASE("softmax rows with a scale and a bias row match float64 softmax, every length", "[kernels]") {
  at::manual_seed(3);
  for (int64_t n = 1; n <= 40; ++n) {
    for (const double scale : {1.0, 0.125}) {
      INFO("n " << n << " scale " << scale);
      const int64_t rows = 3, ld = n + 5;
      // Scores over a wide range; some bias entries are the padding bias (-1e9).
      // Float-representable inputs: the comparison sees the kernel's error, not the inputs' rounding.
      auto scores = (at::randn({rows, ld}, at::kDouble) * 30).to(at::kFloat).to(at::kDouble);
      auto bias = at::randn({2, n}, at::kDouble).to(at::kFloat).to(at::kDouble);
      bias.index_put_({0, at::arange(0, n, 3)}, -1e9);
      for (const int64_t bias_ld : {int64_t{0}, n}) {
        const auto expected_bias = bias_ld == 0 ? bias[0].expand({rows, n})
                                                : at::cat({bias, bias[0].unsqueeze(0)}).narrow(0, 0, rows);
        const auto all_bias = bias_ld == 0 ? bias[0].contiguous() : at::cat({bias, bias[0].unsqueeze(0)}).contiguous();
        const auto want = at::softmax(scale * scores.narrow(1, 0, n) + expected_bias, -1);
        auto f = scores.to(at::kFloat).contiguous();
        const auto fb = all_bias.to(at::kFloat).contiguous();
        comera::cpu::softmax_rows(f.data_ptr<float>(), rows, n, ld, fb.data_ptr<float>(), bias_ld,
                                  static_cast<float>(scale));
        auto d = scores.clone();
        const auto db = all_bias.clone();
        comera::cpu::softmax_rows(d.data_ptr<double>(), rows, n, ld, db.data_ptr<double>(), bias_ld, scale);
        CHECK((f.narrow(1, 0, n).to(at::kDouble) - want).abs().max().item<double>() < 1e-6);
        CHECK((d.narrow(1, 0, n) - want).abs().max().item<double>() < 1e-14);
        // The padding left after each row is untouched.
        CHECK(at::equal(f.narrow(1, n, ld - n), scores.narrow(1, n, ld - n).to(at::kFloat)));
        // Padded entries (bias row 0: every row when shared, rows 0 and 2 otherwise) are exactly
        // zero wherever the row has an unpadded entry.
        if (n > 1)
          for (const int64_t r : {int64_t{0}, int64_t{2}})
            CHECK(f[r].narrow(0, 0, n).index({at::arange(0, n, 3)}).abs().max().item<float>() == 0);
      }
    }
  }
}

TEST_CASE("softmax-and-dropout backward rows match autograd", "[kernels]") {
  at::manual_seed(4);
  // Rows of 37 (two whole float vectors and a tail), the gradient scaled as the scores are.
  const int64_t rows = 5, n = 37;
  const double scale = 0.125;
  const auto scores = at::randn({rows, n}, at::kDouble).requires_grad_();
  const auto mask = (at::rand({rows, n}, at::kDouble) > 0.3).to(at::kDouble) / 0.7;
  const auto probs = at::softmax(scores * scale, -1);
  const auto dropped = probs * mask;
  const auto g = at::randn({rows, n}, at::kDouble);
  dropped.backward(g);
  auto got = g.clone();
  comera::cpu::softmax_dropout_backward_rows(probs.detach().data_ptr<double>(),
                                             dropped.detach().contiguous().data_ptr<double>(),
                                             got.data_ptr<double>(), rows, n, n, scale);
  CHECK((got - scores.grad()).abs().max().item<double>() < 1e-13);
  const auto p32 = probs.detach().to(at::kFloat), d32 = dropped.detach().to(at::kFloat);
  auto got32 = g.to(at::kFloat);
  comera::cpu::softmax_dropout_backward_rows(p32.data_ptr<float>(), d32.data_ptr<float>(),
                                             got32.data_ptr<float>(), rows, n, n, static_cast<float>(scale));
  CHECK((got32.to(at::kDouble) - scores.grad()).abs().max().item<double>() < 1e-6);
}

TEST_CASE("the fused GELU and its gradient match float64 ATen gelu (erf form)", "[kernels][avx512]") {
  at::manual_seed(6);
  // Every tail length, the far tails (x = ±12), zero and a normal spread.
  auto x = at::cat({at::randn({1037}, at::kDouble) * 3, at::linspace(-12, 12, 97, at::kDouble),
                    at::zeros({1}, at::kDouble)})
               .to(at::kFloat);
  REQUIRE(comera::cpu::fast_gelu_available(x));
  for (const int64_t n : {int64_t{1}, int64_t{15}, int64_t{16}, int64_t{17}, x.numel()}) {
    INFO("n " << n);
    const auto xf = x.narrow(0, 0, n).clone().requires_grad_();
    const auto xd = x.narrow(0, 0, n).to(at::kDouble).requires_grad_();
    const auto g = at::randn({n}, at::kDouble);
    const auto y = comera::cpu::gelu(xf);
    const auto want = at::gelu(xd);
    y.backward(g.to(at::kFloat));
    want.backward(g);
    // Absolute error of Φ under 1.5e-7 (the erfc approximation), times |x|, plus float rounding.
    const auto scale = xd.detach().abs().clamp_min(1);
    CHECK(((y.to(at::kDouble) - want).abs() / scale).max().item<double>() < 4e-7);
    CHECK(((xf.grad().to(at::kDouble) - xd.grad()).abs() / (scale * g.abs().clamp_min(1))).max().item<double>() < 1e-6);
  }
}

TEST_CASE("the fused GELU on bf16 rows matches float64 gelu of the same values", "[kernels][avx512bf16]") {
  at::manual_seed(6);
  // bf16 inputs and output gradients, held exactly in float64 for the reference; every tail.
  const auto x = at::cat({at::randn({1037}) * 3, at::linspace(-12, 12, 97)}).to(at::kBFloat16);
  REQUIRE(comera::cpu::fast_gelu_available(x));
  for (const int64_t n : {int64_t{1}, int64_t{15}, int64_t{17}, x.numel()}) {
    INFO("n " << n);
    const auto xb = x.narrow(0, 0, n).clone().requires_grad_();
    const auto xd = xb.detach().to(at::kDouble).requires_grad_();
    const auto g = at::randn({n}).to(at::kBFloat16);
    const auto y = comera::cpu::gelu(xb);
    REQUIRE(y.scalar_type() == at::kBFloat16);
    const auto want = at::gelu(xd);
    y.backward(g);
    want.backward(g.to(at::kDouble));
    REQUIRE(xb.grad().scalar_type() == at::kBFloat16);
    // Rounded to bf16 (2^-8 relative), plus the float32 kernel's error (4e-7 times |x| or 1).
    const auto scale = xd.detach().abs().clamp_min(1);
    CHECK(((y.to(at::kDouble) - want).abs() - want.abs() / 256 - 4e-7 * scale).max().item<double>() <= 0);
    const auto dg = xd.grad();
    CHECK(((xb.grad().to(at::kDouble) - dg).abs() - dg.abs() / 256 - 1e-6 * scale * g.to(at::kDouble).abs())
              .max().item<double>() <= 0);
  }
}

TEST_CASE("bf16 row conversions round to nearest even as c10's scalar ones, every tail, fused product too",
          "[kernels]") {
  // Values with every low half: ties (0x8000) rounding to even both ways, and ±0, ±inf.
  std::vector<float> x;
  for (uint32_t high : {0x3F80u, 0x3F81u, 0xC2F7u, 0x0001u, 0x7F7Fu})
    for (uint32_t low : {0x0000u, 0x0001u, 0x7FFFu, 0x8000u, 0x8001u, 0xFFFFu}) {
      const uint32_t bits = high << 16 | low;
      float f;
      std::memcpy(&f, &bits, sizeof f);
      x.push_back(f);
    }
  for (float v : {0.0f, -0.0f, std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()})
    x.push_back(v);
  const auto r = at::randn({97}) * 1e3;
  x.insert(x.end(), r.data_ptr<float>(), r.data_ptr<float>() + r.numel());
  for (const int64_t n : {int64_t{1}, int64_t{15}, int64_t{16}, int64_t{17}, static_cast<int64_t>(x.size())}) {
    INFO("n " << n);
    std::vector<c10::BFloat16> got(static_cast<size_t>(n));
    comera::cpu::float_to_bf16(x.data(), n, got.data());
    std::vector<float> back(static_cast<size_t>(n));
    comera::cpu::bf16_to_float(got.data(), n, 0.5f, back.data());
    // The fused product: b = a·b in float32, then rounded as above.
    std::vector<float> a(x.begin(), x.begin() + n), b(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j) b[j] = j % 3 == 0 ? 1.0f : (j % 3 == 1 ? 0.0f : 1.25f);
    const std::vector<float> b0 = b;
    std::vector<c10::BFloat16> product(static_cast<size_t>(n));
    comera::cpu::multiply_to_bf16(a.data(), b.data(), n, product.data());
    for (int64_t j = 0; j < n; ++j) {
      INFO("x " << x[j]);
      // AVX512-BF16's conversion instruction reads a denormal as a zero of its sign.
      const bool flushed = comera::cpu::cpu_has_avx512_bf16() && std::fpclassify(x[j]) == FP_SUBNORMAL;
      const c10::BFloat16 want(flushed ? std::copysign(0.0f, x[j]) : x[j]);
      CHECK(got[j].x == want.x);
      CHECK(back[j] == 0.5f * static_cast<float>(want));
      const float p = a[j] * b0[j];
      CHECK(std::memcmp(&b[j], &p, sizeof p) == 0);
      const bool p_flushed = comera::cpu::cpu_has_avx512_bf16() && std::fpclassify(p) == FP_SUBNORMAL;
      CHECK(product[j].x == c10::BFloat16(p_flushed ? std::copysign(0.0f, p) : p).x);
    }
  }
}

TEST_CASE("tiled transpose equals ATen's, with row scales, zero padding and every tail", "[kernels][avx512]") {
  REQUIRE(comera::cpu::cpu_has_avx512f());  // an AVX-512 kernel, like the thin GEMMs it serves
  at::manual_seed(5);
  for (const int64_t rows : {1, 15, 16, 17, 30, 33})
    for (const int64_t cols : {1, 7, 16, 31, 48})
      for (const int64_t pad : {0, 2, 18})
        for (const bool scaled : {false, true}) {
          INFO("rows " << rows << " cols " << cols << " padding " << pad << " scaled " << scaled);
          const int64_t lda = cols + 3, padded = rows + pad, ldb = padded + 5;
          const auto A = at::randn({rows, lda});
          const auto scale = at::randn({rows});
          auto B = at::full({cols + 1, ldb}, 7.0f);  // one row past the last and each row's end
          comera::cpu::transpose(A.data_ptr<float>(), rows, cols, lda, B.data_ptr<float>(), ldb,
                                 padded, scaled ? scale.data_ptr<float>() : nullptr);
          auto want = A.narrow(1, 0, cols);
          if (scaled) want = want * scale.unsqueeze(1);
          want = at::cat({want.t(), at::zeros({cols, pad})}, 1);
          CHECK(at::equal(B.narrow(0, 0, cols).narrow(1, 0, padded), want));
          CHECK((B.narrow(1, padded, ldb - padded) == 7).all().item<bool>());
          CHECK((B[cols] == 7).all().item<bool>());
        }
}

namespace {

using comera::thin_bf16::bf16;

// Random values that bf16 holds exactly, as float64 (the reference's inputs) and bf16.
at::Tensor bf16_values(at::IntArrayRef sizes) {
  return at::randn(sizes).to(at::kBFloat16).to(at::kDouble);
}
bf16* bf16_ptr(at::Tensor& t) { return t.data_ptr<at::BFloat16>(); }

// A bf16 result: each element within bf16 rounding (2^-8 relative) of the float64 product of
// the same bf16 inputs, plus float32 accumulation.
void check_rounded(const at::Tensor& got, const at::Tensor& want) {
  const auto err = (got.to(at::kDouble) - want).abs();
  const double floor = 1e-5 * want.abs().max().item<double>();
  CHECK((err - (want.abs() * (1.0 / 256) + floor)).max().item<double>() <= 0);
}

}  // namespace

TEST_CASE("bf16 thin GEMMs match float64 products of their bf16 inputs, every tail",
          "[kernels][avx512bf16]") {
  REQUIRE(comera::thin_bf16::enabled());
  namespace tb = comera::thin_bf16;
  at::manual_seed(8);
  for (const int64_t rp : {16, 32, 48, 64})
    for (const int64_t m : {1, 7, 13, 48}) {
      INFO("rp " << rp << " rows " << m);
      // C = A·B, k even, rows of A and C wider than used.
      for (const int64_t k : {2, 30, 64}) {
        INFO("k " << k);
        const auto A = bf16_values({m, k + 4}), B = bf16_values({k, rp});
        auto A16 = A.to(at::kBFloat16);
        const auto B32 = B.to(at::kFloat);
        auto P = at::empty({k * rp}, at::kBFloat16);
        tb::pack_pairs(B32.data_ptr<float>(), rp, k, rp, bf16_ptr(P));
        auto C = at::full({m, rp + 3}, 7.0f).to(at::kBFloat16);
        tb::a_b(bf16_ptr(A16), k + 4, m, k, bf16_ptr(P), rp, bf16_ptr(C), rp + 3);
        check_rounded(C.narrow(1, 0, rp), A.narrow(1, 0, k).mm(B));
        CHECK((C.narrow(1, rp, 3).to(at::kFloat) == 7).all().item<bool>());
      }
      // C (+)= Aᵀ·B over interleaved row pairs, B a column slice of a wider matrix (a layer's
      // columns of the stacked U), odd row counts padded with a zero row.
      for (const int64_t k : {1, 17, 40}) {
        INFO("k " << k);
        const int64_t wide = rp + 32, off = 16;
        const auto A = bf16_values({m, k}), B = bf16_values({m, wide});
        auto A16 = A.to(at::kBFloat16), B16 = B.to(at::kBFloat16);
        const int64_t pairs = (m + 1) / 2;
        auto Ai = at::empty({pairs * k * 2}, at::kBFloat16);
        auto Bi = at::empty({pairs * wide * 2}, at::kBFloat16);
        tb::interleave_rows(bf16_ptr(A16), k, m, k, bf16_ptr(Ai));
        tb::interleave_rows(bf16_ptr(B16), wide, m, wide, bf16_ptr(Bi));
        const auto want = A.t().mm(B.narrow(1, off, rp));
        for (const bool add : {false, true}) {
          INFO("add " << add);
          const auto C0 = at::randn({k, rp});
          auto C = C0.clone();
          tb::at_b(bf16_ptr(Ai), k, pairs, k, bf16_ptr(Bi) + 2 * off, wide, rp, C.data_ptr<float>(),
                   rp, add);
          const auto expected = add ? want + C0.to(at::kDouble) : want;
          CHECK((C.to(at::kDouble) - expected).abs().max().item<double>() <
                1e-5 * (expected.abs().max().item<double>() + 1));
        }
      }
    }
  // Interleaving: pair t holds rows 2t and 2t+1 column by column; an odd last row pairs with 0.
  {
    const auto A = at::arange(1, 1 + 3 * 19).reshape({3, 19}).to(at::kBFloat16);
    auto A16 = A.clone();
    auto P = at::empty({2, 19, 2}, at::kBFloat16);
    tb::interleave_rows(bf16_ptr(A16), 19, 3, 19, bf16_ptr(P));
    CHECK(at::equal(P[0], at::stack({A[0], A[1]}, 1)));
    CHECK(at::equal(P[1], at::stack({A[2], at::zeros({19}, at::kBFloat16)}, 1)));
  }
  // Pair transpose: P[t][i] holds A[i][2t], A[i][2t+1]; rows of A wider than used, every tile tail,
  // bit patterns that are denormal or NaN as floats kept.
  for (const int64_t m : {1, 17, 128})
    for (const int64_t k : {2, 34, 64}) {
      INFO("transpose_pairs m " << m << " k " << k);
      auto A = at::randint(0, 65536, {m, k + 6}, at::kInt).to(at::kShort).view(at::kBFloat16);
      auto P = at::empty({k / 2, m, 2}, at::kBFloat16);
      tb::transpose_pairs(bf16_ptr(A), k + 6, m, k, bf16_ptr(P));
      const auto want = A.narrow(1, 0, k).reshape({m, k / 2, 2}).transpose(0, 1);
      CHECK(at::equal(P.view(at::kShort), want.contiguous().view(at::kShort)));
    }
  // C (m, n) = A (m, rp)·B (rp, n) + bias, every column tail, the stacked-rank inner sizes, in bf16
  // and in float32.
  for (const int64_t rp : {16, 32, 96})
    for (const int64_t n : {16, 37, 64, 100, 130})
      for (const bool bias : {false, true}) {
        INFO("rp " << rp << " n " << n << " bias " << bias);
        const int64_t m = 13;
        const auto A = bf16_values({m, rp + 2}), B = bf16_values({rp, n}), b = bf16_values({n});
        auto A16 = A.to(at::kBFloat16);
        const auto B32 = B.to(at::kFloat), b32 = b.to(at::kFloat);
        auto P = at::empty({rp * n}, at::kBFloat16);
        tb::pack_pairs(B32.data_ptr<float>(), n, rp, n, bf16_ptr(P));
        auto C = at::full({m, n + 5}, 7.0f).to(at::kBFloat16);
        auto C32 = at::full({m, n + 5}, 7.0f);
        const float* bp = bias ? b32.data_ptr<float>() : nullptr;
        tb::a_wide(bf16_ptr(A16), rp + 2, m, rp, bf16_ptr(P), n, bp, bf16_ptr(C), n + 5);
        tb::a_wide(bf16_ptr(A16), rp + 2, m, rp, bf16_ptr(P), n, bp, C32.data_ptr<float>(), n + 5);
        auto want = A.narrow(1, 0, rp).mm(B);
        if (bias) want = want + b;
        check_rounded(C.narrow(1, 0, n), want);
        CHECK((C32.narrow(1, 0, n).to(at::kDouble) - want).abs().max().item<double>() <
              1e-5 * (want.abs().max().item<double>() + 1));
        CHECK((C.narrow(1, n, 5).to(at::kFloat) == 7).all().item<bool>());
        CHECK((C32.narrow(1, n, 5) == 7).all().item<bool>());
      }
  // Column sums in float32 over rows with a stride, every tail.
  for (const int64_t n : {1, 16, 37}) {
    const auto A = bf16_values({9, n + 3});
    auto A16 = A.to(at::kBFloat16);
    auto s = at::ones({n});
    tb::col_sum_add(bf16_ptr(A16), n + 3, 9, n, s.data_ptr<float>());
    CHECK((s.to(at::kDouble) - (A.narrow(1, 0, n).sum(0) + 1)).abs().max().item<double>() < 1e-5);
  }
}
