// The fused CPU kernels against float64 ATen: the attention's row softmax with a bias row (every
// row length through the vector width's tails, padding bias, wide score ranges) and its
// softmax-and-dropout backward, the fused GELU with its gradient, and the tiled transpose.
#include "core/kernels/cpu/cpu_features.h"
#include "core/kernels/cpu/gelu.h"
#include "core/kernels/cpu/softmax_rows.h"
#include "core/kernels/cpu/transpose.h"
#include "tests/support/catch.h"

#include <ATen/ATen.h>

TEST_CASE("softmax rows with a bias row match float64 softmax, every length", "[kernels]") {
  at::manual_seed(3);
  for (int64_t n = 1; n <= 40; ++n) {
    INFO("n " << n);
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
      const auto want = at::softmax(scores.narrow(1, 0, n) + expected_bias, -1);
      auto f = scores.to(at::kFloat).contiguous();
      const auto fb = all_bias.to(at::kFloat).contiguous();
      comera::cpu::softmax_rows(f.data_ptr<float>(), rows, n, ld, fb.data_ptr<float>(), bias_ld);
      auto d = scores.clone();
      const auto db = all_bias.clone();
      comera::cpu::softmax_rows(d.data_ptr<double>(), rows, n, ld, db.data_ptr<double>(), bias_ld);
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
