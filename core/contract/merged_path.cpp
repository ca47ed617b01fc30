#include "core/contract/merged_path.h"

#include "core/kernels/cpu/thin_gemm.h"
#include "core/util/threads.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/autograd.h>

#include <algorithm>

namespace comera {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Cores are c_0..c_{2d-1}; bond k (1 <= k < 2d) joins c_{k-1} and c_k and carries ranks[k-1].
int64_t left_rank(const at::Tensor& core) { return core.size(0); }
int64_t mode_size(const at::Tensor& core) { return core.size(1); }
int64_t right_rank(const at::Tensor& core) { return core.size(2); }

// Input side: prefix[k] = c_0 diag(d_1) c_1 ⋯ c_k as (s_0⋯s_k, r_{k+1}), k < d; L = prefix[d-1].
std::vector<at::Tensor> prefix_merges(at::TensorList cores, at::TensorList ranks, int64_t d) {
  std::vector<at::Tensor> prefix{cores[0].reshape({mode_size(cores[0]), right_rank(cores[0])})};
  for (int64_t k = 1; k < d; ++k) {
    const auto& c = cores[k];
    auto merged = at::mm(prefix.back() * ranks[k - 1],
                         c.reshape({left_rank(c), mode_size(c) * right_rank(c)}));
    prefix.push_back(merged.view({-1, right_rank(c)}));
  }
  return prefix;
}

// Output side: suffix[k-d] = c_k diag(d_{k+1}) ⋯ c_{2d-1} as (r_k, s_k⋯s_{2d-1}), k >= d;
// R = suffix[0].
std::vector<at::Tensor> suffix_merges(at::TensorList cores, at::TensorList ranks, int64_t d) {
  const int64_t K = 2 * d;
  std::vector<at::Tensor> suffix(d);
  suffix[d - 1] = cores[K - 1].reshape({left_rank(cores[K - 1]), mode_size(cores[K - 1])});
  for (int64_t k = K - 2; k >= d; --k) {
    const auto& c = cores[k];
    auto merged = at::mm(c.reshape({left_rank(c) * mode_size(c), right_rank(c)}),
                         ranks[k].unsqueeze(1) * suffix[k - d + 1]);
    suffix[k - d] = merged.view({left_rank(c), -1});
  }
  return suffix;
}

// Batch part of the forward: T = X·L and Y = T·diag(d_d)·R + bias.
struct BatchForward {
  at::Tensor y, t;  // t: (B, padded r_d), zero past r_d
};

// Batch part of the backward: V = Tᵀ·dY, XtU = Xᵀ·(dY·Rᵀ), dX = (dY·Rᵀ)·diag(d_d)·Lᵀ.
struct BatchGrads {
  at::Tensor v, xtu, dx, dbias;  // (r_d, out), (in, r_d), (B, in) or undefined, (out) or undefined
};

bool use_kernels(const at::Tensor& x, int64_t rank) {
  return thin::enabled() && x.device().is_cpu() && x.scalar_type() == at::kFloat && rank > 0 &&
         thin::padded(rank) <= thin::kMaxPaddedRank;
}

// Rows per chunk: a chunk of dY stays in L2 between the kernels that read it.
constexpr int64_t kChunkRows = 48;

// Rows [0, B) in one contiguous part per thread, each at least a chunk.
int64_t part_count(int64_t B, int threads) {
  return std::max<int64_t>(1, std::min<int64_t>(threads, B / kChunkRows));
}

// fn(part, begin, end) on every part, one thread each: one parallel region for all the batch
// work of a pass.
template <typename Fn>
void for_parts(int64_t B, int64_t parts, const Fn& fn) {
#pragma omp parallel for num_threads(parts) schedule(static, 1) if (parts > 1)
  for (int64_t p = 0; p < parts; ++p) fn(p, B * p / parts, B * (p + 1) / parts);
}

const float* data(const at::Tensor& t) { return t.data_ptr<float>(); }

// Kernel path: T = X·L and Y = T·(diag(d_d)·R) + bias, chunk by chunk, rank padded with zeros.
BatchForward kernel_forward(const at::Tensor& x, const at::Tensor& L, const at::Tensor& Rd,
                            at::TensorList bias, int threads) {
  const int64_t B = x.size(0), in = x.size(1), out = Rd.size(1), r = L.size(1);
  const int64_t rp = thin::padded(r);
  auto X = x.contiguous();
  auto Lp = at::constant_pad_nd(L, {0, rp - r}).contiguous();
  auto Rp = at::constant_pad_nd(Rd, {0, 0, 0, rp - r}).contiguous();
  auto b = bias.empty() ? at::Tensor() : bias[0].contiguous();
  auto t = at::empty({B, rp}, x.options());
  auto y = at::empty({B, out}, x.options());
  const float* bp = b.defined() ? data(b) : nullptr;
  float* tp = t.data_ptr<float>();
  float* yp = y.data_ptr<float>();
  for_parts(B, part_count(B, threads), [&](int64_t, int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; i += kChunkRows) {
      const int64_t rows = std::min(kChunkRows, end - i);
      thin::a_b(data(X) + i * in, in, rows, in, data(Lp), rp, tp + i * rp);
      thin::a_wide(tp + i * rp, rows, rp, data(Rp), out, bp, yp + i * out, out);
    }
  });
  return {y, t};
}

// Kernel path of the backward in one pass over the rows: per chunk U = dY·Rᵀ, Vᵀ += dYᵀ·T,
// bias gradient += column sums of dY, XtU += Xᵀ·U, dX = U·(L·diag(d_d))ᵀ; per-part sums are
// added at the end.
BatchGrads kernel_backward(const at::Tensor& x, const at::Tensor& t, const at::Tensor& dy,
                           const at::Tensor& L, const at::Tensor& R, const at::Tensor& mid,
                           bool need_dx, bool need_bias, int threads) {
  const int64_t B = x.size(0), in = x.size(1), out = R.size(1), r = L.size(1), rp = t.size(1);
  auto X = x.contiguous();
  auto dY = dy.stride(1) == 1 ? dy : dy.contiguous();
  const int64_t ldy = dY.stride(0);
  auto Rt = at::constant_pad_nd(R.t(), {0, rp - r}).contiguous();
  auto Lmt = at::constant_pad_nd((L * mid).t(), {0, 0, 0, rp - r}).contiguous();
  const int64_t parts = part_count(B, threads);
  auto vt = at::zeros({parts, out, rp}, x.options());
  auto xtu = at::zeros({parts, in, rp}, x.options());
  auto db = at::zeros({parts, need_bias ? out : 0}, x.options());
  auto u = at::empty({parts, kChunkRows, rp}, x.options());
  BatchGrads g;
  if (need_dx) g.dx = at::empty({B, in}, x.options());
  float* dxp = need_dx ? g.dx.data_ptr<float>() : nullptr;
  for_parts(B, parts, [&](int64_t p, int64_t begin, int64_t end) {
    float* up = u.data_ptr<float>() + p * kChunkRows * rp;
    float* vtp = vt.data_ptr<float>() + p * out * rp;
    float* xtup = xtu.data_ptr<float>() + p * in * rp;
    float* dbp = need_bias ? db.data_ptr<float>() + p * out : nullptr;
    for (int64_t i = begin; i < end; i += kChunkRows) {
      const int64_t rows = std::min(kChunkRows, end - i);
      const float* dyc = data(dY) + i * ldy;
      thin::a_b(dyc, ldy, rows, out, data(Rt), rp, up);
      thin::at_b_add(dyc, ldy, rows, out, data(t) + i * rp, rp, vtp);
      if (dbp) thin::col_sum_add(dyc, ldy, rows, out, dbp);
      thin::at_b_add(data(X) + i * in, in, rows, in, up, rp, xtup);
      if (dxp) thin::a_wide(up, rows, rp, data(Lmt), in, nullptr, dxp + i * in, in);
    }
  });
  g.v = vt.sum(0).narrow(1, 0, r).t();
  g.xtu = xtu.sum(0).narrow(1, 0, r);
  if (need_bias) g.dbias = db.sum(0);
  return g;
}

// The kernel path: batch GEMMs by the thin kernels, backward by hand from the saved merges.
class MergedPath : public torch::autograd::Function<MergedPath> {
 public:
  // bias: empty, or the bias alone.
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, at::TensorList cores,
                            at::TensorList ranks, at::TensorList bias) {
    const int64_t d = static_cast<int64_t>(cores.size()) / 2;
    const int threads = at::get_num_threads();
    // Merges and other small work run serially; only the batch GEMMs use threads.
    ThreadLimit serial(1);
    auto prefix = prefix_merges(cores, ranks, d);
    auto suffix = suffix_merges(cores, ranks, d);
    const auto Rd = ranks[d - 1].unsqueeze(1) * suffix.front();
    const BatchForward batch = kernel_forward(x, prefix.back(), Rd, bias, threads);

    variable_list saved{x, batch.t};
    saved.insert(saved.end(), prefix.begin(), prefix.end());
    saved.insert(saved.end(), suffix.begin(), suffix.end());
    saved.insert(saved.end(), cores.begin(), cores.end());
    saved.insert(saved.end(), ranks.begin(), ranks.end());
    ctx->save_for_backward(saved);
    ctx->saved_data["d"] = d;
    ctx->saved_data["bias"] = !bias.empty();
    return batch.y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const int64_t d = ctx->saved_data["d"].toInt();
    const int64_t K = 2 * d;
    const bool has_bias = ctx->saved_data["bias"].toBool();
    auto saved = ctx->get_saved_variables();
    const at::Tensor* prefix = &saved[2];
    const at::Tensor* suffix = prefix + d;
    const at::Tensor* cores = suffix + d;
    const at::Tensor* ranks = cores + K;
    const auto& R = suffix[0];
    const auto& mid = ranks[d - 1];

    const int threads = at::get_num_threads();
    ThreadLimit serial(1);
    const BatchGrads batch = kernel_backward(saved[0], saved[1], grads[0], prefix[d - 1], R, mid,
                                             ctx->needs_input_grad(0), has_bias, threads);
    variable_list dcores(K), dranks(K - 1);
    dranks[d - 1] = (R * batch.v).sum(1);
    auto dL = batch.xtu * mid;
    auto dR = mid.unsqueeze(1) * batch.v;

    // Peel the input side: prefix[k] = (prefix[k-1] diag(d_k)) c_k.
    for (int64_t k = d - 1; k >= 1; --k) {
      const auto& c = cores[k];
      const auto& dk = ranks[k - 1];
      auto g = dL.reshape({prefix[k - 1].size(0), mode_size(c) * right_rank(c)});
      auto c2 = c.reshape({left_rank(c), mode_size(c) * right_rank(c)});
      dcores[k] = at::mm((prefix[k - 1] * dk).t(), g).view(c.sizes());
      auto dq = at::mm(g, c2.t());
      dranks[k - 1] = (prefix[k - 1] * dq).sum(0);
      dL = dq * dk;
    }
    dcores[0] = dL.reshape(cores[0].sizes());

    // Peel the output side: suffix[k] = c_k (diag(d_{k+1}) suffix[k+1]).
    for (int64_t k = d; k <= K - 2; ++k) {
      const auto& c = cores[k];
      const auto& dk = ranks[k];
      const auto& next = suffix[k - d + 1];
      auto g = dR.reshape({left_rank(c) * mode_size(c), next.size(1)});
      auto c2 = c.reshape({left_rank(c) * mode_size(c), right_rank(c)});
      dcores[k] = at::mm(g, (dk.unsqueeze(1) * next).t()).view(c.sizes());
      auto dq = at::mm(c2.t(), g);
      dranks[k] = (next * dq).sum(1);
      dR = dk.unsqueeze(1) * dq;
    }
    dcores[K - 1] = dR.reshape(cores[K - 1].sizes());

    variable_list out{batch.dx};
    out.insert(out.end(), dcores.begin(), dcores.end());
    out.insert(out.end(), dranks.begin(), dranks.end());
    if (has_bias) out.push_back(batch.dbias);
    return out;
  }
};

// The composite path: the same merges and batch GEMMs as ATen ops under ordinary autograd.
at::Tensor composite_merged_path(const at::Tensor& x, at::TensorList cores, at::TensorList ranks,
                                 const at::Tensor& bias) {
  const int64_t d = static_cast<int64_t>(cores.size()) / 2;
  const auto L = prefix_merges(cores, ranks, d).back();
  const auto Rd = ranks[d - 1].unsqueeze(1) * suffix_merges(cores, ranks, d).front();
  const auto t = at::mm(x, L);
  return bias.defined() ? at::addmm(bias, t, Rd) : at::mm(t, Rd);
}

}  // namespace

at::Tensor merged_path(const at::Tensor& x, const std::vector<at::Tensor>& cores,
                       const std::vector<at::Tensor>& ranks, const at::Tensor& bias) {
  TORCH_CHECK(!cores.empty() && cores.size() % 2 == 0 && ranks.size() + 1 == cores.size(),
              "merged_path: needs 2d cores and 2d-1 rank vectors, got ", cores.size(), " and ",
              ranks.size());
  TORCH_CHECK(x.dim() == 2, "merged_path: x must be (B, in), got ", x.sizes());
  if (!use_kernels(x, cores[cores.size() / 2].size(0)))
    return composite_merged_path(x, cores, ranks, bias);
  std::vector<at::Tensor> bias_list;
  if (bias.defined()) bias_list.push_back(bias);
  return MergedPath::apply(x, at::TensorList(cores), at::TensorList(ranks),
                           at::TensorList(bias_list));
}

int64_t merged_path_macs(const std::vector<int64_t>& sizes, const std::vector<int64_t>& ranks,
                         int64_t batch, bool padded) {
  const int64_t K = static_cast<int64_t>(sizes.size()), d = K / 2;
  int64_t in = 1, out = 1, merges = 0;
  for (int64_t k = 0; k < d; ++k) {
    if (k > 0) merges += in * ranks[k] * sizes[k] * ranks[k + 1];
    in *= sizes[k];
  }
  for (int64_t k = K - 1; k >= d; --k) {
    if (k < K - 1) merges += ranks[k] * sizes[k] * ranks[k + 1] * out;
    out *= sizes[k];
  }
  // Each merge GEMM costs twice more backward (core gradient and bond gradient).
  const int64_t rp = thin::padded(ranks[d]);
  const int64_t r = padded && rp <= thin::kMaxPaddedRank ? rp : ranks[d];
  return 3 * (batch * r * (in + out) + merges);
}

}  // namespace comera
