#include "core/models/attention_core.h"

#include "core/kernels/cpu/apply_mask.h"
#include "core/kernels/cpu/blas_gemm.h"
#include "core/kernels/cpu/softmax_rows.h"
#include "core/kernels/cpu/thin_gemm.h"
#include "core/kernels/cpu/transpose.h"
#include "core/kernels/fast_kernels.h"
#include "core/kernels/dropout_mask.h"
#include "core/util/error.h"
#include "core/util/step_parts.h"
#include "core/util/precision.h"

#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <ATen/record_function.h>
#include <torch/autograd.h>

#include <algorithm>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace comera {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// (B, T, h·dh) -> (B, h, T, dh), a view.
at::Tensor heads_view(const at::Tensor& t, int64_t heads) {
  return t.view({t.size(0), t.size(1), heads, t.size(2) / heads}).transpose(1, 2);
}

// One (batch entry, head) pair's operands in the (B, T, heads·dh) layout: T rows of dh, D apart.
struct Layout {
  int64_t B, T, heads, dh, D;
  int64_t head(int64_t pair) const { return (pair / heads) * T * D + (pair % heads) * dh; }
  int64_t block(int64_t pair) const { return pair * T * T; }  // in (B, heads, T, T)
  // Pairs per parallel chunk: small products stay together (a chunk costs a parallel task).
  int64_t grain() const { return std::max<int64_t>(1, (int64_t{1} << 18) / std::max<int64_t>(1, T * T * dh)); }
};

Layout layout_of(const at::Tensor& q, int64_t heads) {
  const int64_t D = q.size(2);
  return {q.size(0), q.size(1), heads, D / heads, D};
}

void count_flops(const Layout& l, double products) {
  if (step_parts::counting())
    step_parts::add_flops(step_parts::kAttention,
                          products * 2.0 * static_cast<double>(l.B * l.heads * l.T * l.T * l.dh));
}

// The products of one (batch entry, head) pair: T x dh operands D apart in the (B, T, heads·dh)
// layout, T x T blocks contiguous. By BLAS, or for float32 with dh a multiple of 16 up to 64 by
// the thin AVX-512 kernels, a head's transposed K or V made first (OpenBLAS packs and scales
// the operands of every one of these small products: a third of its time here). One per thread.
template <typename T>
class PairProducts {
 public:
  explicit PairProducts(const Layout& l)
      : T_(l.T), dh_(l.dh), D_(l.D),
        thin_(std::is_same_v<T, float> && thin::enabled() && l.dh % 16 == 0 &&
              l.dh <= thin::kMaxPaddedRank) {
    if (thin_) transposed_.resize(static_cast<size_t>(l.T * l.dh));
  }

  // S = scale·Q·Kᵀ.
  void scores(const T* Q, const T* K, T scale, T* S) {
    if constexpr (std::is_same_v<T, float>)
      if (thin_) {
        scales_.assign(static_cast<size_t>(T_), scale);
        cpu::transpose(K, T_, dh_, D_, transposed_.data(), T_, T_, scales_.data());
        return thin::a_wide(Q, D_, T_, dh_, transposed_.data(), T_, nullptr, S, T_, false);
      }
    cpu::gemm<T>(false, true, T_, T_, dh_, scale, Q, D_, K, D_, 0, S, T_);
  }
  // C = P·V.
  void context(const T* P, const T* V, T* C) {
    if constexpr (std::is_same_v<T, float>)
      if (thin_) return thin::a_b(P, T_, T_, T_, V, D_, dh_, C, D_);
    cpu::gemm<T>(false, false, T_, dh_, T_, 1, P, T_, V, D_, 0, C, D_);
  }
  // dV = Pᵀ·G.
  void value_grad(const T* P, const T* G, T* dV) {
    if constexpr (std::is_same_v<T, float>)
      if (thin_) return thin::at_b(P, T_, T_, T_, G, D_, dh_, dV, D_, false);
    cpu::gemm<T>(true, false, T_, dh_, T_, 1, P, T_, G, D_, 0, dV, D_);
  }
  // W = G·Vᵀ.
  void prob_grad(const T* G, const T* V, T* W) {
    if constexpr (std::is_same_v<T, float>)
      if (thin_) {
        cpu::transpose(V, T_, dh_, D_, transposed_.data(), T_, T_);
        return thin::a_wide(G, D_, T_, dh_, transposed_.data(), T_, nullptr, W, T_, false);
      }
    cpu::gemm<T>(false, true, T_, T_, dh_, 1, G, D_, V, D_, 0, W, T_);
  }
  // dQ = W·K and dK = Wᵀ·Q, W the scores' gradient (the scale already in it).
  void query_key_grads(const T* W, const T* Q, const T* K, T* dQ, T* dK) {
    if constexpr (std::is_same_v<T, float>)
      if (thin_) {
        thin::a_b(W, T_, T_, T_, K, D_, dh_, dQ, D_);
        return thin::at_b(W, T_, T_, T_, Q, D_, dh_, dK, D_, false);
      }
    cpu::gemm<T>(false, false, T_, dh_, T_, 1, W, T_, K, D_, 0, dQ, D_);
    cpu::gemm<T>(true, false, T_, dh_, T_, 1, W, T_, Q, D_, 0, dK, D_);
  }

 private:
  int64_t T_, dh_, D_;
  bool thin_;
  std::vector<T> transposed_, scales_;
};

// D = m ⊙ P for pair i's block of probabilities P into out (its T x T block of the mask m).
template <typename T>
void drop(const DropoutMask& mask, const Layout& l, int64_t i, const T* P, T* out) {
  mask.multipliers(l.block(i), l.T * l.T, out);
  for (int64_t j = 0; j < l.T * l.T; ++j) out[j] *= P[j];
}

// The fused path: per (batch entry, head) pair, its T x T block goes through the score product,
// bias, softmax, dropout and the context product (forward), or the probability and score
// gradients and the three gradient products (backward), while in cache. Each product is one
// kernel call (PairProducts); the pairs are split across threads (BLAS runs single-threaded
// inside the parallel region).
class AttentionCore : public torch::autograd::Function<AttentionCore> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& q, const at::Tensor& k,
                            const at::Tensor& v, const at::Tensor& bias, int64_t heads, double p,
                            double scale) {
    const auto qc = q.contiguous(), kc = k.contiguous(), vc = v.contiguous();
    const Layout l = layout_of(qc, heads);
    count_flops(l, 2);
    auto b4 = bias.to(qc.scalar_type()).expand({l.B, heads, l.T, l.T});
    if (b4.stride(3) != 1) b4 = b4.contiguous();
    auto probs = at::empty({l.B, heads, l.T, l.T}, qc.options());
    auto context = at::empty(qc.sizes(), qc.options());
    std::optional<DropoutMask> mask;
    if (p > 0) mask.emplace(p);
    AT_DISPATCH_FLOATING_TYPES(qc.scalar_type(), "comera_attention_forward", [&] {
      const scalar_t *Q = qc.data_ptr<scalar_t>(), *K = kc.data_ptr<scalar_t>(),
                     *V = vc.data_ptr<scalar_t>(), *bp = b4.data_ptr<scalar_t>();
      scalar_t *P = probs.data_ptr<scalar_t>(), *C = context.data_ptr<scalar_t>();
      at::parallel_for(0, l.B * heads, l.grain(), [&](int64_t first, int64_t last) {
        PairProducts<scalar_t> products(l);
        std::vector<scalar_t> dropped(mask ? static_cast<size_t>(l.T * l.T) : 0);
        for (int64_t i = first; i < last; ++i) {
          scalar_t* pb = P + l.block(i);
          products.scores(Q + l.head(i), K + l.head(i), static_cast<scalar_t>(scale), pb);
          cpu::softmax_rows(pb, l.T, l.T, l.T, bp + (i / heads) * b4.stride(0) + (i % heads) * b4.stride(1),
                            b4.stride(2));
          if (mask) drop(*mask, l, i, pb, dropped.data());
          products.context(mask ? dropped.data() : pb, V + l.head(i), C + l.head(i));
        }
      });
    });
    ctx->saved_data["heads"] = heads;
    ctx->saved_data["scale"] = scale;
    ctx->saved_data["p"] = p;
    ctx->saved_data["seed"] = mask ? static_cast<int64_t>(mask->seed()) : int64_t{0};
    ctx->save_for_backward({qc, kc, vc, probs});
    return context;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto &q = saved[0], &k = saved[1], &v = saved[2], &probs = saved[3];
    const int64_t heads = ctx->saved_data["heads"].toInt();
    const double scale = ctx->saved_data["scale"].toDouble(), p = ctx->saved_data["p"].toDouble();
    // The dropped probabilities are made again from the mask's seed rather than kept: at batch
    // 32 they were 25 MB a layer written forward and read back.
    std::optional<DropoutMask> mask;
    if (p > 0) mask.emplace(p, static_cast<uint64_t>(ctx->saved_data["seed"].toInt()));
    const Layout l = layout_of(q, heads);
    count_flops(l, 4);
    const auto g = grads[0].contiguous();
    auto dq = at::empty(q.sizes(), q.options()), dk = at::empty_like(dq), dv = at::empty_like(dq);
    AT_DISPATCH_FLOATING_TYPES(q.scalar_type(), "comera_attention_backward", [&] {
      const scalar_t *Q = q.data_ptr<scalar_t>(), *K = k.data_ptr<scalar_t>(),
                     *V = v.data_ptr<scalar_t>(), *G = g.data_ptr<scalar_t>(),
                     *P = probs.data_ptr<scalar_t>();
      scalar_t *dQ = dq.data_ptr<scalar_t>(), *dK = dk.data_ptr<scalar_t>(),
               *dV = dv.data_ptr<scalar_t>();
      const auto s = static_cast<scalar_t>(scale);
      at::parallel_for(0, l.B * heads, l.grain(), [&](int64_t first, int64_t last) {
        PairProducts<scalar_t> products(l);
        std::vector<scalar_t> w(static_cast<size_t>(l.T * l.T));  // this pair's score gradient
        std::vector<scalar_t> dropped(mask ? w.size() : 0);
        for (int64_t i = first; i < last; ++i) {
          const scalar_t *pb = P + l.block(i), *gi = G + l.head(i);
          if (mask) drop(*mask, l, i, pb, dropped.data());
          const scalar_t* db = mask ? dropped.data() : pb;
          products.value_grad(db, gi, dV + l.head(i));
          products.prob_grad(gi, V + l.head(i), w.data());
          cpu::softmax_dropout_backward_rows(pb, db, w.data(), l.T, l.T, l.T, s);
          products.query_key_grads(w.data(), Q + l.head(i), K + l.head(i), dQ + l.head(i),
                                   dK + l.head(i));
        }
      });
    });
    return {dq, dk, dv, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

// The composite path: the same product in ATen ops under ordinary autograd, the mask made on
// the tensors' device.
at::Tensor composite_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                               const at::Tensor& bias, int64_t heads, double p, double scale) {
  const auto qh = heads_view(q.contiguous(), heads), kh = heads_view(k.contiguous(), heads),
             vh = heads_view(v.contiguous(), heads);
  auto probs = at::softmax(at::matmul(qh, kh.transpose(-2, -1)) * scale + bias, -1);
  if (p > 0) probs = probs * DropoutMask(p).multipliers_like(probs);
  return at::matmul(probs, vh).transpose(1, 2).reshape(q.sizes());
}

}  // namespace

at::Tensor attention_core(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                          const at::Tensor& bias, int64_t heads, double p, bool train, double scale) {
  if (!(p >= 0 && p < 1))
    throw Error("attention: dropout probability must be in [0, 1), got p = " + std::to_string(p));
  // A bf16 forward's attention runs the float32 kernel: LibTorch 1.13's bf16 batched products
  // were slower than it (docs/precision.md).
  if (fast_kernels_enabled() && q.scalar_type() == at::kBFloat16)
    return attention_core(float_activation(q), float_activation(k), float_activation(v), bias, heads, p,
                          train, scale);
  const double rate = train ? p : 0.0;
  RECORD_USER_SCOPE(step_parts::scope_name(step_parts::kAttention));
  bool blas = false;
  if (cpu::maskable(q))
    AT_DISPATCH_FLOATING_TYPES(q.scalar_type(), "comera_attention_blas", [&] { blas = cpu::has_blas_gemm<scalar_t>(); });
  if (fast_kernels_enabled() && blas) return AttentionCore::apply(q, k, v, bias, heads, rate, scale);
  return composite_attention(q, k, v, bias, heads, rate, scale);
}

}  // namespace comera
