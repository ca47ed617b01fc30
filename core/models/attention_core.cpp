#include "core/models/attention_core.h"

#include "core/kernels/cpu/apply_mask.h"
#include "core/kernels/fast_kernels.h"
#include "core/models/dropout_mask.h"
#include "core/util/error.h"
#include "core/util/step_parts.h"

#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <ATen/record_function.h>
#include <torch/autograd.h>

#include <dlfcn.h>

#include <algorithm>
#include <string>
#include <type_traits>

namespace comera {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// (B, T, h·dh) -> (B, h, T, dh), a view.
at::Tensor heads_view(const at::Tensor& t, int64_t heads) {
  return t.view({t.size(0), t.size(1), heads, t.size(2) / heads}).transpose(1, 2);
}

// Fortran BLAS gemm of the BLAS LibTorch was linked with, looked up at run time (comera does not
// link BLAS itself); null where the symbol is not there.
template <typename T>
using Gemm = void (*)(const char*, const char*, const int*, const int*, const int*, const T*,
                      const T*, const int*, const T*, const int*, const T*, T*, const int*);

template <typename T>
Gemm<T> blas_gemm() {
  static const auto gemm =
      reinterpret_cast<Gemm<T>>(dlsym(RTLD_DEFAULT, std::is_same_v<T, float> ? "sgemm_" : "dgemm_"));
  return gemm;
}

// How BLAS (column-major) sees a row-major matrix view with sizes (rows, cols): its transpose,
// "N", when rows are contiguous, or itself, "T", when columns are; ld its leading dimension.
struct BlasOperand {
  char trans = 0;  // 0: neither layout
  int ld = 0;
};

BlasOperand blas_operand(const at::Tensor& m) {
  const int64_t rows = m.size(-2), cols = m.size(-1);
  if (m.stride(-1) == 1 && m.stride(-2) >= std::max<int64_t>(1, cols)) return {'N', static_cast<int>(m.stride(-2))};
  if (m.stride(-2) == 1 && m.stride(-1) >= std::max<int64_t>(1, rows)) return {'T', static_cast<int>(m.stride(-1))};
  return {};
}

// out[b, h] = a[b, h] @ b[b, h] for (B, h, ., .) views with a unit stride in one of their last two
// dimensions: one BLAS call per (batch entry, head), the pairs split across threads (BLAS runs
// single-threaded inside the parallel region), so no call pays for a thread team of its own.
// False when BLAS or the layout is not there.
template <typename T>
bool blas_products(at::Tensor& out, const at::Tensor& a, const at::Tensor& b) {
  const auto gemm = blas_gemm<T>();
  if (!gemm || out.dim() != 4 || out.stride(-1) != 1 || out.stride(-2) < out.size(-1)) return false;
  const auto A = blas_operand(a), Bop = blas_operand(b);
  if (!A.trans || !Bop.trans) return false;
  const int m = static_cast<int>(out.size(-2)), n = static_cast<int>(out.size(-1)),
            k = static_cast<int>(a.size(-1)), ldc = static_cast<int>(out.stride(-2));
  const int64_t heads = out.size(1);
  T* const o = out.data_ptr<T>();
  const T* const pa = a.data_ptr<T>();
  const T* const pb = b.data_ptr<T>();
  // Small products stay on one thread: a parallel region costs more than they do.
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 18) / std::max<int64_t>(1, int64_t{m} * n * k));
  at::parallel_for(0, out.size(0) * heads, grain, [&](int64_t first, int64_t last) {
    const T one = 1, zero = 0;
    for (int64_t i = first; i < last; ++i) {
      const int64_t bi = i / heads, hi = i % heads;
      // Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ.
      gemm(&Bop.trans, &A.trans, &n, &m, &k, &one, pb + bi * b.stride(0) + hi * b.stride(1), &Bop.ld,
           pa + bi * a.stride(0) + hi * a.stride(1), &A.ld, &zero,
           o + bi * out.stride(0) + hi * out.stride(1), &ldc);
    }
  });
  return true;
}

// out[b] = a[b] @ b[b] for each batch entry, written in place (out may be a strided view).
void batched_products(at::Tensor out, const at::Tensor& a, const at::Tensor& b) {
  RECORD_USER_SCOPE(step_parts::scope_name(step_parts::kAttentionProducts));
  if (step_parts::counting())
    step_parts::add_flops(step_parts::kAttentionProducts,
                          2.0 * static_cast<double>(out.numel() * a.size(-1)));
  bool done = false;
  AT_DISPATCH_FLOATING_TYPES(out.scalar_type(), "comera_attention_products",
                             [&] { done = blas_products<scalar_t>(out, a, b); });
  if (done) return;
  for (int64_t i = 0; i < out.size(0); ++i) {
    auto o = out.select(0, i);
    at::bmm_out(o, a.select(0, i), b.select(0, i));
  }
}

// d scores = P ⊙ (m ⊙ g - <m ⊙ g, P>) row by row, m the dropout multipliers and P the
// probabilities; with D = m ⊙ P (the dropped probabilities) that is D ⊙ g - P <g, D>, so the mask
// itself is not needed.
template <typename T>
void softmax_dropout_backward(const T* P, const T* D, const T* g, T* out, int64_t rows, int64_t n) {
  at::parallel_for(0, rows, std::max<int64_t>(1, 16384 / n), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const T *p = P + r * n, *d = D + r * n, *gr = g + r * n;
      T* o = out + r * n;
      T acc[8] = {};  // independent partial sums, so the dot product is not one long chain
      int64_t j = 0;
      for (; j + 8 <= n; j += 8)
        for (int k = 0; k < 8; ++k) acc[k] += gr[j + k] * d[j + k];
      for (; j < n; ++j) acc[0] += gr[j] * d[j];
      T dot = 0;
      for (T a : acc) dot += a;
      for (j = 0; j < n; ++j) o[j] = d[j] * gr[j] - p[j] * dot;
    }
  });
}

class AttentionCore : public torch::autograd::Function<AttentionCore> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& q, const at::Tensor& k,
                            const at::Tensor& v, const at::Tensor& bias, int64_t heads, double p) {
    const auto qc = q.contiguous(), kc = k.contiguous(), vc = v.contiguous();
    const int64_t B = qc.size(0), T = qc.size(1);
    const auto qh = heads_view(qc, heads), kh = heads_view(kc, heads), vh = heads_view(vc, heads);
    auto scores = at::empty({B, heads, T, T}, qc.options());
    batched_products(scores, qh, kh.transpose(-2, -1));
    scores.add_(bias);
    const auto probs = at::softmax(scores, -1).contiguous();
    scores.reset();
    const auto dropped = p > 0 ? cpu::apply_mask(DropoutMask(p), probs) : probs;
    auto context = at::empty(qc.sizes(), qc.options());
    batched_products(heads_view(context, heads), dropped, vh);
    ctx->saved_data["heads"] = heads;
    ctx->save_for_backward({qc, kc, vc, probs, dropped});
    return context;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto &q = saved[0], &k = saved[1], &v = saved[2], &probs = saved[3], &dropped = saved[4];
    const int64_t heads = ctx->saved_data["heads"].toInt();
    const auto qh = heads_view(q, heads), kh = heads_view(k, heads), vh = heads_view(v, heads);
    const auto gh = heads_view(grads[0].contiguous(), heads);
    auto dq = at::empty(q.sizes(), q.options()), dk = at::empty_like(dq), dv = at::empty_like(dq);
    batched_products(heads_view(dv, heads), dropped.transpose(-2, -1), gh);
    auto dprobs = at::empty(probs.sizes(), probs.options());
    batched_products(dprobs, gh, vh.transpose(-2, -1));
    auto dscores = at::empty_like(dprobs);
    const int64_t n = probs.size(-1), rows = probs.numel() / std::max<int64_t>(1, n);
    AT_DISPATCH_FLOATING_TYPES(probs.scalar_type(), "comera_attention_backward", [&] {
      softmax_dropout_backward<scalar_t>(probs.data_ptr<scalar_t>(), dropped.data_ptr<scalar_t>(),
                                         dprobs.data_ptr<scalar_t>(), dscores.data_ptr<scalar_t>(),
                                         rows, n);
    });
    batched_products(heads_view(dq, heads), dscores, kh);
    batched_products(heads_view(dk, heads), dscores.transpose(-2, -1), qh);
    return {dq, dk, dv, at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

// The composite path: the same product in ATen ops under ordinary autograd, the mask made on
// the tensors' device.
at::Tensor composite_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                               const at::Tensor& bias, int64_t heads, double p) {
  const auto qh = heads_view(q.contiguous(), heads), kh = heads_view(k.contiguous(), heads),
             vh = heads_view(v.contiguous(), heads);
  auto probs = at::softmax(at::matmul(qh, kh.transpose(-2, -1)) + bias, -1);
  if (p > 0) probs = probs * DropoutMask(p).multipliers_like(probs);
  return at::matmul(probs, vh).transpose(1, 2).reshape(q.sizes());
}

}  // namespace

at::Tensor attention_core(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                          const at::Tensor& bias, int64_t heads, double p, bool train) {
  if (!(p >= 0 && p < 1))
    throw Error("attention: dropout probability must be in [0, 1), got p = " + std::to_string(p));
  const double rate = train ? p : 0.0;
  RECORD_USER_SCOPE(step_parts::scope_name(step_parts::kAttention));
  if (fast_kernels_enabled() && cpu::maskable(q))
    return AttentionCore::apply(q, k, v, bias, heads, rate);
  return composite_attention(q, k, v, bias, heads, rate);
}

}  // namespace comera
