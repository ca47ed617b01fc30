#include "core/models/attention_core.h"

#include "core/kernels/cpu/apply_mask.h"
#include "core/kernels/cpu/bf16_rows.h"
#include "core/kernels/cpu/thin_gemm_bf16.h"
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

thin_bf16::bf16* bf16_ptr(const at::Tensor& t) { return t.data_ptr<at::BFloat16>(); }

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

// What a core's backward needs: its tensors (q, k and v as it read them, the probabilities),
// the heads, the scale and the dropout mask, kept as its probability and seed and made again.
struct Saved {
  at::Tensor q, k, v, probs;
  int64_t heads;
  double scale;
  std::optional<DropoutMask> mask;
};

void save(AutogradContext* ctx, const variable_list& tensors, int64_t heads, double scale, double p,
          const std::optional<DropoutMask>& mask) {
  ctx->save_for_backward(tensors);
  ctx->saved_data["heads"] = heads;
  ctx->saved_data["scale"] = scale;
  ctx->saved_data["p"] = p;
  ctx->saved_data["seed"] = mask ? static_cast<int64_t>(mask->seed()) : int64_t{0};
}

Saved restore(AutogradContext* ctx) {
  const auto t = ctx->get_saved_variables();
  Saved s{t[0], t[1], t[2], t[3], ctx->saved_data["heads"].toInt(),
          ctx->saved_data["scale"].toDouble(), std::nullopt};
  const double p = ctx->saved_data["p"].toDouble();
  if (p > 0) s.mask.emplace(p, static_cast<uint64_t>(ctx->saved_data["seed"].toInt()));
  return s;
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
    save(ctx, {qc, kc, vc, probs}, heads, scale, p, mask);
    return context;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    // The dropped probabilities are made again from the mask's seed rather than kept: at batch
    // 32 they were 25 MB a layer written forward and read back.
    const Saved saved = restore(ctx);
    const Layout l = layout_of(saved.q, saved.heads);
    count_flops(l, 4);
    const auto g = grads[0].contiguous();
    auto dq = at::empty_like(saved.q), dk = at::empty_like(dq), dv = at::empty_like(dq);
    AT_DISPATCH_FLOATING_TYPES(saved.q.scalar_type(), "comera_attention_backward", [&] {
      const scalar_t *Q = saved.q.data_ptr<scalar_t>(), *K = saved.k.data_ptr<scalar_t>(),
                     *V = saved.v.data_ptr<scalar_t>(), *G = g.data_ptr<scalar_t>(),
                     *P = saved.probs.data_ptr<scalar_t>();
      scalar_t *dQ = dq.data_ptr<scalar_t>(), *dK = dk.data_ptr<scalar_t>(),
               *dV = dv.data_ptr<scalar_t>();
      const auto s = static_cast<scalar_t>(saved.scale);
      at::parallel_for(0, l.B * saved.heads, l.grain(), [&](int64_t first, int64_t last) {
        PairProducts<scalar_t> products(l);
        std::vector<scalar_t> w(static_cast<size_t>(l.T * l.T));  // this pair's score gradient
        std::vector<scalar_t> dropped(saved.mask ? w.size() : 0);
        for (int64_t i = first; i < last; ++i) {
          const scalar_t *pb = P + l.block(i), *gi = G + l.head(i);
          if (saved.mask) drop(*saved.mask, l, i, pb, dropped.data());
          const scalar_t* db = saved.mask ? dropped.data() : pb;
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
        cpu::multiply_to_bf16(s.data(), m.data(), n, Dp + l.block(i));
      }
    });
    save(ctx, {qs, ks, vs, probs}, heads, scale, p, mask);
    ctx->saved_data["B"] = l.B;
    return move_heads(at::bmm(dropped, vs), l, true);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const Saved saved = restore(ctx);
    const int64_t B = ctx->saved_data["B"].toInt(), T = saved.q.size(1), dh = saved.q.size(2);
    const Layout l{B, T, saved.heads, dh, saved.heads * dh};
    count_flops(l, 4);
    const auto g = move_heads(grads[0].to(at::kBFloat16), l, false);
    // The probabilities' gradient, turned in place into the scores' (the scale in it).
    auto w = at::bmm(g, saved.v.transpose(1, 2));
    auto dropped = saved.mask ? at::empty_like(saved.probs) : saved.probs;
    const auto* P = saved.probs.data_ptr<at::BFloat16>();
    auto *W = w.data_ptr<at::BFloat16>(), *Dp = dropped.data_ptr<at::BFloat16>();
    const int64_t n = l.T * l.T;
    at::parallel_for(0, l.B * saved.heads, l.grain(), [&](int64_t first, int64_t last) {
      std::vector<float> pf(static_cast<size_t>(n)), wf(pf.size()), df(saved.mask ? pf.size() : 0);
      for (int64_t i = first; i < last; ++i) {
        cpu::bf16_to_float(P + l.block(i), n, 1.0f, pf.data());
        cpu::bf16_to_float(W + l.block(i), n, 1.0f, wf.data());
        if (saved.mask) {
          saved.mask->multipliers(l.block(i), n, df.data());
          cpu::multiply_to_bf16(pf.data(), df.data(), n, Dp + l.block(i));
        }
        cpu::softmax_dropout_backward_rows(pf.data(), saved.mask ? df.data() : pf.data(), wf.data(),
                                           l.T, l.T, l.T, static_cast<float>(saved.scale));
        cpu::float_to_bf16(wf.data(), n, W + l.block(i));
      }
    });
    return {move_heads(at::bmm(w, saved.k), l, true),
            move_heads(at::bmm(w.transpose(1, 2), saved.q), l, true),
            move_heads(at::bmm(dropped.transpose(1, 2), g), l, true), at::Tensor(), at::Tensor(),
            at::Tensor(), at::Tensor()};
  }
};

// The bf16 path on comera's AVX512-BF16 kernels (head sizes 16 to 64, an even length): the
// fused float32 path's shape, per (batch entry, head) pair while in cache, with bf16 operands
// and float32 scores and probability gradients between the products. An operand reduced along
// the length is interleaved by row pairs, Kᵀ and Vᵀ are made as pairs along the head size
// (thin_gemm_bf16.h). Products kept in float32 (dV, dK) are rounded to bf16 row by row.
class Bf16KernelAttentionCore : public torch::autograd::Function<Bf16KernelAttentionCore> {
 public:
  static bool takes(const Layout& l) {
    return thin_bf16::enabled() && l.dh % 16 == 0 && l.dh <= 64 && l.T % 2 == 0;
  }

  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& q, const at::Tensor& k,
                            const at::Tensor& v, const at::Tensor& bias, int64_t heads, double p,
                            double scale) {
    const auto qc = q.contiguous(), kc = k.contiguous(), vc = v.contiguous();
    const Layout l = layout_of(qc, heads);
    count_flops(l, 2);
    auto b4 = bias.to(at::kFloat).expand({l.B, heads, l.T, l.T});
    if (b4.stride(3) != 1) b4 = b4.contiguous();
    std::optional<DropoutMask> mask;
    if (p > 0) mask.emplace(p);
    auto probs = at::empty({l.B, heads, l.T, l.T}, qc.options());
    auto context = at::empty(qc.sizes(), qc.options());
    const auto *Q = bf16_ptr(qc), *K = bf16_ptr(kc), *V = bf16_ptr(vc);
    auto *P = bf16_ptr(probs), *C = bf16_ptr(context);
    const float* bp = b4.data_ptr<float>();
    const int64_t n = l.T * l.T;
    at::parallel_for(0, l.B * heads, l.grain(), [&](int64_t first, int64_t last) {
      std::vector<float> s(static_cast<size_t>(n)), m(mask ? s.size() : 0);
      std::vector<thin_bf16::bf16> pairs(static_cast<size_t>(l.T * l.dh)), dropped(m.size());
      for (int64_t i = first; i < last; ++i) {
        thin_bf16::transpose_pairs(K + l.head(i), l.D, l.T, l.dh, pairs.data());
        thin_bf16::a_wide(Q + l.head(i), l.D, l.T, l.dh, pairs.data(), l.T, nullptr, s.data(), l.T);
        cpu::softmax_rows(s.data(), l.T, l.T, l.T,
                          bp + (i / heads) * b4.stride(0) + (i % heads) * b4.stride(1), b4.stride(2),
                          static_cast<float>(scale));
        cpu::float_to_bf16(s.data(), n, P + l.block(i));
        const thin_bf16::bf16* used = P + l.block(i);
        if (mask) {
          mask->multipliers(l.block(i), n, m.data());
          cpu::multiply_to_bf16(s.data(), m.data(), n, dropped.data());
          used = dropped.data();
        }
        thin_bf16::interleave_rows(V + l.head(i), l.D, l.T, l.dh, pairs.data());
        thin_bf16::a_b(used, l.T, l.T, l.T, pairs.data(), l.dh, C + l.head(i), l.D);
      }
    });
    save(ctx, {qc, kc, vc, probs}, heads, scale, p, mask);
    return context;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const Saved saved = restore(ctx);
    const Layout l = layout_of(saved.q, saved.heads);
    count_flops(l, 4);
    const auto g = grads[0].to(at::kBFloat16).contiguous();
    auto dq = at::empty_like(saved.q), dk = at::empty_like(dq), dv = at::empty_like(dq);
    const auto *Q = bf16_ptr(saved.q), *K = bf16_ptr(saved.k), *V = bf16_ptr(saved.v),
               *G = bf16_ptr(g), *P = bf16_ptr(saved.probs);
    auto *dQ = bf16_ptr(dq), *dK = bf16_ptr(dk), *dV = bf16_ptr(dv);
    const int64_t n = l.T * l.T, half = l.T / 2;
    at::parallel_for(0, l.B * saved.heads, l.grain(), [&](int64_t first, int64_t last) {
      std::vector<float> pf(static_cast<size_t>(n)), wf(pf.size()), df(saved.mask ? pf.size() : 0);
      std::vector<float> rows(static_cast<size_t>(l.T * l.dh));
      std::vector<thin_bf16::bf16> square(pf.size()), wide(pf.size()), narrow(rows.size()),
          dropped(df.size());
      // A float32 (T, dh) product rounded into its head's rows of a bf16 gradient.
      const auto round_rows = [&](thin_bf16::bf16* out) {
        for (int64_t r = 0; r < l.T; ++r) cpu::float_to_bf16(rows.data() + r * l.dh, l.dh, out + r * l.D);
      };
      for (int64_t i = first; i < last; ++i) {
        const thin_bf16::bf16 *pb = P + l.block(i), *gi = G + l.head(i);
        cpu::bf16_to_float(pb, n, 1.0f, pf.data());
        const thin_bf16::bf16* used = pb;
        if (saved.mask) {
          saved.mask->multipliers(l.block(i), n, df.data());
          cpu::multiply_to_bf16(pf.data(), df.data(), n, dropped.data());
          used = dropped.data();
        }
        // dV = Dᵀ·G
        thin_bf16::interleave_rows(used, l.T, l.T, l.T, square.data());
        thin_bf16::interleave_rows(gi, l.D, l.T, l.dh, narrow.data());
        thin_bf16::at_b(square.data(), l.T, half, l.T, narrow.data(), l.dh, l.dh, rows.data(), l.dh, false);
        round_rows(dV + l.head(i));
        // W = G·Vᵀ, then the scores' gradient in place (the scale in it)
        thin_bf16::transpose_pairs(V + l.head(i), l.D, l.T, l.dh, narrow.data());
        thin_bf16::a_wide(gi, l.D, l.T, l.dh, narrow.data(), l.T, nullptr, wf.data(), l.T);
        cpu::softmax_dropout_backward_rows(pf.data(), saved.mask ? df.data() : pf.data(), wf.data(), l.T,
                                           l.T, l.T, static_cast<float>(saved.scale));
        cpu::float_to_bf16(wf.data(), n, square.data());
        // dQ = W·K and dK = Wᵀ·Q
        thin_bf16::interleave_rows(K + l.head(i), l.D, l.T, l.dh, narrow.data());
        thin_bf16::a_b(square.data(), l.T, l.T, l.T, narrow.data(), l.dh, dQ + l.head(i), l.D);
        thin_bf16::interleave_rows(square.data(), l.T, l.T, l.T, wide.data());
        thin_bf16::interleave_rows(Q + l.head(i), l.D, l.T, l.dh, narrow.data());
        thin_bf16::at_b(wide.data(), l.T, half, l.T, narrow.data(), l.dh, l.dh, rows.data(), l.dh, false);
        round_rows(dK + l.head(i));
      }
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
  const double rate = train ? p : 0.0;
  RECORD_USER_SCOPE(step_parts::scope_name(step_parts::kAttention));
  const auto bf16 = [](const at::Tensor& t) { return t.device().is_cpu() && t.scalar_type() == at::kBFloat16; };
  if (fast_kernels_enabled() && bf16(q) && bf16(k) && bf16(v))
    return Bf16KernelAttentionCore::takes(layout_of(q, heads))
               ? Bf16KernelAttentionCore::apply(q, k, v, bias, heads, rate, scale)
               : Bf16AttentionCore::apply(q, k, v, bias, heads, rate, scale);
  bool blas = false;
  if (cpu::maskable(q))
    AT_DISPATCH_FLOATING_TYPES(q.scalar_type(), "comera_attention_blas", [&] { blas = cpu::has_blas_gemm<scalar_t>(); });
  if (fast_kernels_enabled() && blas) return AttentionCore::apply(q, k, v, bias, heads, rate, scale);
  return composite_attention(q, k, v, bias, heads, rate, scale);
}

}  // namespace comera
