#include "core/models/attention_core.h"

#include "core/kernels/cpu/apply_mask.h"
#include "core/kernels/cpu/bf16_rows.h"
#include "core/kernels/cpu/blas_gemm.h"
#include "core/kernels/cpu/softmax_rows.h"
#include "core/kernels/cpu/thin_gemm.h"
#include "core/kernels/cpu/transpose.h"
#include "core/kernels/fast_kernels.h"
#include "core/kernels/dropout_mask.h"
#include "core/util/error.h"
#include "core/util/step_parts.h"

#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <ATen/record_function.h>
#include <torch/autograd.h>

#include <algorithm>
#include <cstring>
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

// (B, T, heads·dh) -> (B·heads, T, dh) contiguous, or back (merge), by row copies: ATen's
// copy of the transposed bf16 view took 4.9 ms at batch 32 where these take 0.4.
at::Tensor move_heads(const at::Tensor& t, const Layout& l, bool merge) {
  const auto src = t.contiguous();
  auto out = merge ? at::empty({l.B, l.T, l.D}, src.options()) : at::empty({l.B * l.heads, l.T, l.dh}, src.options());
  const int64_t bytes = l.dh * static_cast<int64_t>(src.element_size());
  const auto* from = static_cast<const char*>(src.data_ptr());
  auto* to = static_cast<char*>(out.data_ptr());
  at::parallel_for(0, l.B * l.heads, 1, [&](int64_t first, int64_t last) {
    for (int64_t pair = first; pair < last; ++pair)
      for (int64_t r = 0; r < l.T; ++r) {
        const int64_t split = (pair * l.T + r) * bytes, joined = l.head(pair) * static_cast<int64_t>(src.element_size()) + r * l.D * static_cast<int64_t>(src.element_size());
        std::memcpy(merge ? to + joined : to + split, merge ? from + split : from + joined, static_cast<size_t>(bytes));
      }
  });
  return out;
}

// The bf16 path (a bf16 forward's projections hand over bf16 q, k and v): the four products as
// batched bf16 matmuls (oneDNN, on AMX or AVX512-BF16 where the CPU has them; measured in
// docs/precision.md) on the heads split apart, the bias, softmax and dropout rows in float32
// between them. The probabilities are kept in bf16 for backward; the dropped ones are made
// again from the mask's seed.
class Bf16AttentionCore : public torch::autograd::Function<Bf16AttentionCore> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& q, const at::Tensor& k,
                            const at::Tensor& v, const at::Tensor& bias, int64_t heads, double p,
                            double scale) {
    const Layout l = layout_of(q, heads);
    count_flops(l, 2);
    const auto qs = move_heads(q, l, false), ks = move_heads(k, l, false), vs = move_heads(v, l, false);
    const auto scores = at::bmm(qs, ks.transpose(1, 2));
    auto b4 = bias.to(at::kFloat).expand({l.B, heads, l.T, l.T});
    if (b4.stride(3) != 1) b4 = b4.contiguous();
    std::optional<DropoutMask> mask;
    if (p > 0) mask.emplace(p);
    auto probs = at::empty_like(scores);
    auto dropped = mask ? at::empty_like(scores) : probs;
    const auto* S = scores.data_ptr<at::BFloat16>();
    auto *P = probs.data_ptr<at::BFloat16>(), *Dp = dropped.data_ptr<at::BFloat16>();
    const float* bp = b4.data_ptr<float>();
    const int64_t n = l.T * l.T;
    at::parallel_for(0, l.B * heads, l.grain(), [&](int64_t first, int64_t last) {
      std::vector<float> s(static_cast<size_t>(n)), m(mask ? s.size() : 0);
      for (int64_t i = first; i < last; ++i) {
        cpu::bf16_to_float(S + l.block(i), n, static_cast<float>(scale), s.data());
        cpu::softmax_rows(s.data(), l.T, l.T, l.T, bp + (i / heads) * b4.stride(0) + (i % heads) * b4.stride(1),
                          b4.stride(2));
        cpu::float_to_bf16(s.data(), n, P + l.block(i));
        if (!mask) continue;
        mask->multipliers(l.block(i), n, m.data());
        for (int64_t j = 0; j < n; ++j) s[j] *= m[j];
        cpu::float_to_bf16(s.data(), n, Dp + l.block(i));
      }
    });
    ctx->saved_data["heads"] = heads;
    ctx->saved_data["scale"] = scale;
    ctx->saved_data["p"] = p;
    ctx->saved_data["seed"] = mask ? static_cast<int64_t>(mask->seed()) : int64_t{0};
    ctx->saved_data["B"] = l.B;
    ctx->save_for_backward({qs, ks, vs, probs});
    return move_heads(at::bmm(dropped, vs), l, true);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto &qs = saved[0], &ks = saved[1], &vs = saved[2], &probs = saved[3];
    const int64_t heads = ctx->saved_data["heads"].toInt();
    const double scale = ctx->saved_data["scale"].toDouble(), p = ctx->saved_data["p"].toDouble();
    std::optional<DropoutMask> mask;
    if (p > 0) mask.emplace(p, static_cast<uint64_t>(ctx->saved_data["seed"].toInt()));
    const int64_t B = ctx->saved_data["B"].toInt(), T = qs.size(1), dh = qs.size(2);
    const Layout l{B, T, heads, dh, heads * dh};
    count_flops(l, 4);
    const auto g = move_heads(grads[0].to(at::kBFloat16), l, false);
    // The probabilities' gradient, turned in place into the scores' (the scale in it).
    auto w = at::bmm(g, vs.transpose(1, 2));
    auto dropped = mask ? at::empty_like(probs) : probs;
    const auto* P = probs.data_ptr<at::BFloat16>();
    auto *W = w.data_ptr<at::BFloat16>(), *Dp = dropped.data_ptr<at::BFloat16>();
    const int64_t n = l.T * l.T;
    at::parallel_for(0, l.B * heads, l.grain(), [&](int64_t first, int64_t last) {
      std::vector<float> pf(static_cast<size_t>(n)), wf(pf.size()), df(mask ? pf.size() : 0);
      for (int64_t i = first; i < last; ++i) {
        cpu::bf16_to_float(P + l.block(i), n, 1.0f, pf.data());
        cpu::bf16_to_float(W + l.block(i), n, 1.0f, wf.data());
        if (mask) {
          mask->multipliers(l.block(i), n, df.data());
          for (int64_t j = 0; j < n; ++j) df[j] *= pf[j];
          cpu::float_to_bf16(df.data(), n, Dp + l.block(i));
        }
        cpu::softmax_dropout_backward_rows(pf.data(), mask ? df.data() : pf.data(), wf.data(), l.T, l.T, l.T,
                                           static_cast<float>(scale));
        cpu::float_to_bf16(wf.data(), n, W + l.block(i));
      }
    });
    return {move_heads(at::bmm(w, ks), l, true), move_heads(at::bmm(w.transpose(1, 2), qs), l, true),
            move_heads(at::bmm(dropped.transpose(1, 2), g), l, true), at::Tensor(), at::Tensor(),
            at::Tensor(), at::Tensor()};
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
  const double rate = train ? p : 0.0;
  RECORD_USER_SCOPE(step_parts::scope_name(step_parts::kAttention));
  const auto bf16 = [](const at::Tensor& t) { return t.device().is_cpu() && t.scalar_type() == at::kBFloat16; };
  if (fast_kernels_enabled() && bf16(q) && bf16(k) && bf16(v))
    return Bf16AttentionCore::apply(q, k, v, bias, heads, rate, scale);
  bool blas = false;
  if (cpu::maskable(q))
    AT_DISPATCH_FLOATING_TYPES(q.scalar_type(), "comera_attention_blas", [&] { blas = cpu::has_blas_gemm<scalar_t>(); });
  if (fast_kernels_enabled() && blas) return AttentionCore::apply(q, k, v, bias, heads, rate, scale);
  return composite_attention(q, k, v, bias, heads, rate, scale);
}

}  // namespace comera
