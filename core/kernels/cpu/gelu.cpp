#include "core/kernels/cpu/gelu.h"

#include "core/kernels/cpu/cpu_features.h"
#include "core/kernels/fast_kernels.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/autograd.h>

#include <algorithm>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define COMERA_GELU_X86 1
#include "core/kernels/cpu/vector_exp.h"
#endif

namespace comera::cpu {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Elements per parallel task.
constexpr int64_t kGrain = 32768;

#ifdef COMERA_GELU_X86
// Φ(x) and, when wanted, φ(x) = e^{-x²/2}/sqrt(2π). With z = |x|/sqrt(2), erfc(z) ≈ poly(t)·e^{-z²}
// for t = 1/(1 + 0.3275911 z); Φ(x) = 1 - erfc(z)/2 for x >= 0 and erfc(z)/2 below.
struct Cdf {
  __m512 cdf, pdf;
};

COMERA_AVX512F inline Cdf normal_cdf(__m512 x) {
  const __m512 z = _mm512_mul_ps(_mm512_abs_ps(x), _mm512_set1_ps(0.70710678118654752f));
  const __m512 t = _mm512_div_ps(_mm512_set1_ps(1.0f), _mm512_fmadd_ps(z, _mm512_set1_ps(0.3275911f),
                                                                        _mm512_set1_ps(1.0f)));
  __m512 poly = _mm512_set1_ps(1.061405429f);
  poly = _mm512_fmadd_ps(poly, t, _mm512_set1_ps(-1.453152027f));
  poly = _mm512_fmadd_ps(poly, t, _mm512_set1_ps(1.421413741f));
  poly = _mm512_fmadd_ps(poly, t, _mm512_set1_ps(-0.284496736f));
  poly = _mm512_fmadd_ps(poly, t, _mm512_set1_ps(0.254829592f));
  poly = _mm512_mul_ps(poly, t);
  const __m512 gauss = exp_nonpositive(_mm512_sub_ps(_mm512_setzero_ps(), _mm512_mul_ps(z, z)));
  const __m512 half_erfc = _mm512_mul_ps(_mm512_mul_ps(poly, gauss), _mm512_set1_ps(0.5f));
  const __mmask16 negative = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ);
  const __m512 cdf = _mm512_mask_blend_ps(negative, _mm512_sub_ps(_mm512_set1_ps(1.0f), half_erfc), half_erfc);
  return {cdf, _mm512_mul_ps(gauss, _mm512_set1_ps(0.39894228040143268f))};
}

COMERA_AVX512F void gelu_forward(const float* x, float* y, int64_t n) {
  for_vectors(n, [&](int64_t i, auto m) COMERA_AVX512F {
    const __m512 v = load_ps(x + i, m);
    store_ps(y + i, m, _mm512_mul_ps(v, normal_cdf(v).cdf));
  });
}

// dx = g·(Φ(x) + x·φ(x)).
COMERA_AVX512F void gelu_backward(const float* x, const float* g, float* dx, int64_t n) {
  for_vectors(n, [&](int64_t i, auto m) COMERA_AVX512F {
    const __m512 v = load_ps(x + i, m);
    const Cdf c = normal_cdf(v);
    store_ps(dx + i, m, _mm512_mul_ps(load_ps(g + i, m), _mm512_fmadd_ps(v, c.pdf, c.cdf)));
  });
}
// The same on bf16 rows, computed in float32.
COMERA_AVX512_BF16 void gelu_forward(const c10::BFloat16* x, c10::BFloat16* y, int64_t n) {
  for_vectors(n, [&](int64_t i, auto m) COMERA_AVX512_BF16 {
    const __m512 v = load_bf16(x + i, m);
    store_bf16(y + i, m, _mm512_mul_ps(v, normal_cdf(v).cdf));
  });
}

COMERA_AVX512_BF16 void gelu_backward(const c10::BFloat16* x, const c10::BFloat16* g,
                                      c10::BFloat16* dx, int64_t n) {
  for_vectors(n, [&](int64_t i, auto m) COMERA_AVX512_BF16 {
    const __m512 v = load_bf16(x + i, m);
    const Cdf c = normal_cdf(v);
    store_bf16(dx + i, m, _mm512_mul_ps(load_bf16(g + i, m), _mm512_fmadd_ps(v, c.pdf, c.cdf)));
  });
}
#else
template <typename E>
void gelu_forward(const E*, E*, int64_t) {}
template <typename E>
void gelu_backward(const E*, const E*, E*, int64_t) {}
#endif

// fn(E{}) with E the element type of x: float or c10::BFloat16.
template <typename Fn>
void with_element(const at::Tensor& x, const Fn& fn) {
  if (x.scalar_type() == at::kBFloat16) return fn(c10::BFloat16{});
  return fn(float{});
}

// On float32 or bf16 x; a bf16 x gets a bf16 gradient.
class Gelu : public torch::autograd::Function<Gelu> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x) {
    const auto xc = x.contiguous();
    auto y = at::empty_like(xc);
    with_element(xc, [&](auto e) {
      using E = decltype(e);
      const E* xp = xc.data_ptr<E>();
      E* yp = y.data_ptr<E>();
      at::parallel_for(0, xc.numel(), kGrain, [&](int64_t begin, int64_t end) {
        gelu_forward(xp + begin, yp + begin, end - begin);
      });
    });
    ctx->save_for_backward({xc});
    return y;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto x = ctx->get_saved_variables()[0];
    const auto g = grads[0].to(x.scalar_type()).contiguous();
    auto dx = at::empty_like(x);
    with_element(x, [&](auto e) {
      using E = decltype(e);
      const E *xp = x.data_ptr<E>(), *gp = g.data_ptr<E>();
      E* dp = dx.data_ptr<E>();
      at::parallel_for(0, x.numel(), kGrain, [&](int64_t begin, int64_t end) {
        gelu_backward(xp + begin, gp + begin, dp + begin, end - begin);
      });
    });
    return {dx};
  }
};

}  // namespace

bool fast_gelu_available(const at::Tensor& x) {
  if (!(fast_kernels_enabled() && x.device().is_cpu())) return false;
  if (x.scalar_type() == at::kBFloat16) return cpu_has_avx512_bf16();
  return cpu_has_avx512f() && x.scalar_type() == at::kFloat;
}

at::Tensor gelu(const at::Tensor& x) { return Gelu::apply(x); }

}  // namespace comera::cpu
