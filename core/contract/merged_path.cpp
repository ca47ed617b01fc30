#include "core/contract/merged_path.h"

#include "core/kernels/cpu/blas_gemm.h"
#include "core/kernels/cpu/thin_gemm.h"
#include "core/kernels/cpu/transpose.h"

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

// Host view of a chain for the kernel path: c_k's data, the rank vectors d_j (bond j joins c_{j-1}
// and c_j) and the sizes r_0..r_2d, s_0..s_{2d-1}.
struct Chain {
  int64_t d = 0, K = 0;
  std::vector<const float*> core, rank;  // rank[j] is d_j, j = 1..K-1 (rank[0] unused)
  std::vector<int64_t> r, s;

  Chain(at::TensorList cores, at::TensorList ranks)
      : d(static_cast<int64_t>(cores.size()) / 2), K(static_cast<int64_t>(cores.size())) {
    core.resize(K);
    rank.resize(K);
    r.resize(K + 1);
    s.resize(K);
    r[0] = 1;
    for (int64_t k = 0; k < K; ++k) {
      core[k] = cores[k].data_ptr<float>();
      s[k] = mode_size(cores[k]);
      r[k + 1] = right_rank(cores[k]);
      if (k > 0) rank[k] = ranks[k - 1].data_ptr<float>();
    }
  }
  int64_t in() const {
    int64_t n = 1;
    for (int64_t k = 0; k < d; ++k) n *= s[k];
    return n;
  }
};

// Scratch buffers of one thread, reused across calls (the merges' temporaries are small).
std::vector<float>& scratch(int i) {
  thread_local std::vector<float> buffers[3];
  return buffers[i];
}
float* scratch(int i, int64_t n) {
  auto& b = scratch(i);
  if (static_cast<int64_t>(b.size()) < n) b.resize(static_cast<size_t>(n));
  return b.data();
}

// Runs a and b, on two threads when there are two: the two sides of the chain are independent.
template <typename A, typename B>
void both_sides(int threads, const A& a, const B& b) {
#pragma omp parallel sections num_threads(2) if (threads > 1)
  {
#pragma omp section
    a();
#pragma omp section
    b();
  }
}

// Input side: prefix[k] = c_0 diag(d_1) c_1 ⋯ c_k as (s_0⋯s_k, r_{k+1}) for k < d-1 (prefix[0]
// is c_0 itself), and L = prefix[d-1] written with its r_d columns padded to rp with zeros.
void merge_input_side(const Chain& c, int64_t rp, std::vector<at::Tensor>& prefix, float* Lp) {
  const float* P = c.core[0];
  int64_t rows = c.s[0];
  for (int64_t k = 1; k < c.d; ++k) {
    const int64_t rk = c.r[k], sk = c.s[k], rn = c.r[k + 1];
    const bool last = k == c.d - 1;
    const int64_t width = last ? rp : rn;
    // S = diag(d_k)·c_k as (r_k, s_k·width).
    float* S = scratch(0, rk * sk * width);
    for (int64_t a = 0; a < rk; ++a)
      for (int64_t b = 0; b < sk; ++b) {
        const float* src = c.core[k] + (a * sk + b) * rn;
        float* dst = S + (a * sk + b) * width;
        for (int64_t j = 0; j < rn; ++j) dst[j] = c.rank[k][a] * src[j];
        for (int64_t j = rn; j < width; ++j) dst[j] = 0;
      }
    float* out = last ? Lp : prefix[k].data_ptr<float>();
    cpu::gemm<float>(false, false, rows, sk * width, rk, 1, P, rk, S, sk * width, 0, out, sk * width);
    P = out;
    rows *= sk;
  }
  if (c.d == 1)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < rp; ++j) Lp[i * rp + j] = j < c.r[1] ? c.core[0][i * c.r[1] + j] : 0;
}

// Output side: suffix[k-d] = c_k diag(d_{k+1}) ⋯ c_{2d-1} as (r_k, s_k⋯s_{2d-1}) for k >= d
// (suffix[d-1] is c_{2d-1} itself); R = suffix[0].
void merge_output_side(const Chain& c, std::vector<at::Tensor>& suffix) {
  const float* Q = c.core[c.K - 1];
  int64_t cols = c.s[c.K - 1];
  for (int64_t k = c.K - 2; k >= c.d; --k) {
    const int64_t rk = c.r[k], sk = c.s[k], rn = c.r[k + 1];
    // S = c_k·diag(d_{k+1}) as (r_k·s_k, r_{k+1}).
    float* S = scratch(0, rk * sk * rn);
    for (int64_t i = 0; i < rk * sk; ++i)
      for (int64_t j = 0; j < rn; ++j) S[i * rn + j] = c.core[k][i * rn + j] * c.rank[k + 1][j];
    float* out = suffix[k - c.d].data_ptr<float>();
    cpu::gemm<float>(false, false, rk * sk, cols, rn, 1, S, rn, Q, cols, 0, out, cols);
    Q = out;
    cols *= sk;
  }
}

// Peels the input side: given dL (in, r_d), the gradients of c_{d-1}..c_0 and d_{d-1}..d_1.
void peel_input_side(const Chain& c, const std::vector<at::Tensor>& prefix, float* G,
                     std::vector<at::Tensor>& dcores, std::vector<at::Tensor>& dranks) {
  int64_t rows = c.in();  // rows of prefix[k] before the step, then of prefix[k-1]
  for (int64_t k = c.d - 1; k >= 1; --k) {
    const int64_t rk = c.r[k], sk = c.s[k], rn = c.r[k + 1];
    rows /= sk;
    const float* P = k == 1 ? c.core[0] : prefix[k - 1].data_ptr<float>();  // (rows, r_k)
    const float* d = c.rank[k];
    // G is the gradient of prefix[k] as (rows, s_k·r_{k+1}).
    float* dc = dcores[k].data_ptr<float>();
    cpu::gemm<float>(true, false, rk, sk * rn, rows, 1, P, rk, G, sk * rn, 0, dc, sk * rn);
    for (int64_t a = 0; a < rk; ++a)
      for (int64_t j = 0; j < sk * rn; ++j) dc[a * sk * rn + j] *= d[a];
    float* dQ = scratch(1, rows * rk);
    cpu::gemm<float>(false, true, rows, rk, sk * rn, 1, G, sk * rn, c.core[k], sk * rn, 0, dQ, rk);
    float* dd = dranks[k - 1].data_ptr<float>();
    for (int64_t a = 0; a < rk; ++a) dd[a] = 0;
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t a = 0; a < rk; ++a) {
        dd[a] += P[i * rk + a] * dQ[i * rk + a];
        dQ[i * rk + a] *= d[a];
      }
    std::swap(scratch(1), scratch(2));
    G = scratch(2).data();
  }
  std::copy(G, G + c.s[0] * c.r[1], dcores[0].data_ptr<float>());
}

// With Q (rows, cols) multiplied by diag(d) from the left in the forward and G the gradient of
// the product: dd[j] = Σ_m Q[j, m]·G[j, m], then G <- diag(d)·G, the gradient of Q.
void row_bond_gradient(const float* Q, float* G, int64_t rows, int64_t cols, const float* d,
                       float* dd) {
  for (int64_t j = 0; j < rows; ++j) {
    float sum = 0;
    for (int64_t m = 0; m < cols; ++m) {
      sum += Q[j * cols + m] * G[j * cols + m];
      G[j * cols + m] *= d[j];
    }
    dd[j] = sum;
  }
}

// Peels the output side: given dR (r_d, out), the gradients of c_d..c_{2d-1} and
// d_{d+1}..d_{2d-1}.
void peel_output_side(const Chain& c, const std::vector<at::Tensor>& suffix, float* G,
                      std::vector<at::Tensor>& dcores, std::vector<at::Tensor>& dranks) {
  for (int64_t k = c.d; k <= c.K - 2; ++k) {
    const int64_t rk = c.r[k], sk = c.s[k], rn = c.r[k + 1];
    const auto& next = suffix[k - c.d + 1];  // (r_{k+1}, cols)
    const int64_t cols = next.size(1);
    const float* Qn = next.data_ptr<float>();
    const float* d = c.rank[k + 1];
    // G is the gradient of suffix[k-d] as (r_k·s_k, cols).
    float* dc = dcores[k].data_ptr<float>();
    cpu::gemm<float>(false, true, rk * sk, rn, cols, 1, G, cols, Qn, cols, 0, dc, rn);
    for (int64_t i = 0; i < rk * sk; ++i)
      for (int64_t j = 0; j < rn; ++j) dc[i * rn + j] *= d[j];
    float* H = scratch(1, rn * cols);
    cpu::gemm<float>(true, false, rn, cols, rk * sk, 1, c.core[k], rn, G, cols, 0, H, cols);
    row_bond_gradient(Qn, H, rn, cols, d, dranks[k].data_ptr<float>());
    std::swap(scratch(1), scratch(2));
    G = scratch(2).data();
  }
  std::copy(G, G + c.r[c.K - 1] * c.s[c.K - 1], dcores[c.K - 1].data_ptr<float>());
}

bool use_kernels(const at::Tensor& x, at::TensorList cores, at::TensorList ranks) {
  const int64_t rank = cores[cores.size() / 2].size(0);
  if (!(thin::enabled() && cpu::has_blas_gemm<float>() && x.device().is_cpu() &&
        x.scalar_type() == at::kFloat && rank > 0 && thin::padded(rank) <= thin::kMaxPaddedRank))
    return false;
  for (const auto& t : cores)
    if (!t.device().is_cpu() || t.scalar_type() != at::kFloat || !t.is_contiguous()) return false;
  for (const auto& t : ranks)
    if (!t.device().is_cpu() || t.scalar_type() != at::kFloat || !t.is_contiguous()) return false;
  return true;
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

// The kernel path: core merges by BLAS on the chain's two sides at once, batch GEMMs by the thin
// kernels at r_d padded to rp, and a backward by hand from the saved merges. No ATen op runs
// except allocations.
class MergedPath : public torch::autograd::Function<MergedPath> {
 public:
  // bias: empty, or the bias alone. train: a backward will follow, so the transposed operands
  // it needs are made here, on the merges' two threads.
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, at::TensorList cores,
                            at::TensorList ranks, at::TensorList bias, bool train) {
    const Chain c(cores, ranks);
    const int threads = at::get_num_threads();
    const int64_t B = x.size(0), in = c.in(), r = c.r[c.d], rp = thin::padded(r);
    const float* mid = c.rank[c.d];
    const auto options = x.options();
    // prefix[d-1] is L padded to (in, rp).
    std::vector<at::Tensor> prefix(c.d), suffix(c.d);
    prefix[0] = cores[0];
    int64_t rows = c.s[0];
    for (int64_t k = 1; k + 1 < c.d; ++k) {
      rows *= c.s[k];
      prefix[k] = at::empty({rows, c.r[k + 1]}, options);
    }
    auto Lp = at::empty({in, rp}, options);
    prefix[c.d - 1] = Lp;
    suffix[c.d - 1] = cores[c.K - 1];
    int64_t out = c.s[c.K - 1];
    for (int64_t k = c.K - 2; k >= c.d; --k) {
      out *= c.s[k];
      suffix[k - c.d] = at::empty({c.r[k], out}, options);
    }
    const auto& R = suffix[0];
    // Rd = diag(d_d)·R with rows padded to rp; for the backward Lᵀ (rp, in) and Rdᵀ (out, rp).
    auto Rd = at::empty({rp, out}, options);
    at::Tensor LT, RdT;
    if (train) LT = at::empty({rp, in}, options), RdT = at::empty({out, rp}, options);
    both_sides(
        threads,
        [&] {
          merge_input_side(c, rp, prefix, Lp.data_ptr<float>());
          if (train) cpu::transpose(data(Lp), in, rp, rp, LT.data_ptr<float>(), in, in);
        },
        [&] {
          merge_output_side(c, suffix);
          if (train) cpu::transpose(data(R), r, out, out, RdT.data_ptr<float>(), rp, rp, mid);
          const float* rr = data(R);
          float* rd = Rd.data_ptr<float>();
          for (int64_t j = 0; j < r; ++j)
            for (int64_t o = 0; o < out; ++o) rd[j * out + o] = mid[j] * rr[j * out + o];
          std::fill(rd + r * out, rd + rp * out, 0.0f);
        });

    auto X = x.contiguous();
    const auto b = bias.empty() ? at::Tensor() : bias[0].contiguous();
    const float* bp = b.defined() ? data(b) : nullptr;
    auto t = at::empty({B, rp}, options);
    auto y = at::empty({B, out}, options);
    float* tp = t.data_ptr<float>();
    float* yp = y.data_ptr<float>();
    const float *xp = data(X), *lp = data(Lp), *rd = data(Rd);
    for_parts(B, part_count(B, threads), [&](int64_t, int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; i += kChunkRows) {
        const int64_t n = std::min(kChunkRows, end - i);
        thin::a_b(xp + i * in, in, n, in, lp, rp, tp + i * rp);
        thin::a_wide(tp + i * rp, n, rp, rd, out, bp, yp + i * out, out);
      }
    });

    if (train) {
      variable_list saved{X, t, LT, RdT};
      saved.insert(saved.end(), prefix.begin(), prefix.end());
      saved.insert(saved.end(), suffix.begin(), suffix.end());
      saved.insert(saved.end(), cores.begin(), cores.end());
      saved.insert(saved.end(), ranks.begin(), ranks.end());
      ctx->save_for_backward(saved);
      ctx->saved_data["bias"] = !bias.empty();
    }
    return y;
  }

  // Batch part per chunk of rows: U = dY·Rdᵀ, Vᵀ += dYᵀ·T, bias gradient += column sums of dY,
  // dL += Xᵀ·U, dX = U·Lᵀ; per-part sums are added after. Then the two sides are peeled at once.
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const bool has_bias = ctx->saved_data["bias"].toBool();
    auto saved = ctx->get_saved_variables();
    // saved: X, T, Lᵀ, Rdᵀ, the d prefixes, the d suffixes, the 2d cores and the 2d-1 rank vectors.
    const at::Tensor &X = saved[0], &t = saved[1], &LT = saved[2], &RdT = saved[3];
    const int64_t d = (static_cast<int64_t>(saved.size()) - 3) / 6, K = 2 * d;
    const std::vector<at::Tensor> prefix(saved.begin() + 4, saved.begin() + 4 + d);
    const std::vector<at::Tensor> suffix(saved.begin() + 4 + d, saved.begin() + 4 + 2 * d);
    const at::TensorList cores(saved.data() + 4 + 2 * d, K);
    const at::TensorList ranks(saved.data() + 4 + 2 * d + K, K - 1);
    const Chain c(cores, ranks);
    const int threads = at::get_num_threads();
    const auto& R = suffix[0];
    const int64_t B = X.size(0), in = X.size(1), out = R.size(1), r = c.r[d], rp = t.size(1);
    const auto options = X.options();
    const float* mid = c.rank[d];

    auto dY = grads[0].stride(1) == 1 ? grads[0] : grads[0].contiguous();
    const int64_t ldy = dY.stride(0);
    const int64_t parts = part_count(B, threads);
    auto vt = at::empty({parts, out, rp}, options);
    auto xtu = at::empty({parts, in, rp}, options);
    auto db = at::empty({parts, has_bias ? out : 0}, options);
    auto u = at::empty({parts, kChunkRows, rp}, options);
    at::Tensor dx;
    if (ctx->needs_input_grad(0)) dx = at::empty({B, in}, options);
    float* dxp = dx.defined() ? dx.data_ptr<float>() : nullptr;
    const float *dyp = data(dY), *tp = data(t), *xp = data(X), *rdt = data(RdT), *lt = data(LT);
    for_parts(B, parts, [&](int64_t p, int64_t begin, int64_t end) {
      float* up = u.data_ptr<float>() + p * kChunkRows * rp;
      float* vtp = vt.data_ptr<float>() + p * out * rp;
      float* xtup = xtu.data_ptr<float>() + p * in * rp;
      float* dbp = has_bias ? db.data_ptr<float>() + p * out : nullptr;
      if (dbp) std::fill(dbp, dbp + out, 0.0f);
      if (begin == end) {
        std::fill(vtp, vtp + out * rp, 0.0f);
        std::fill(xtup, xtup + in * rp, 0.0f);
      }
      for (int64_t i = begin; i < end; i += kChunkRows) {
        const int64_t n = std::min(kChunkRows, end - i);
        const float* dyc = dyp + i * ldy;
        const bool add = i > begin;  // the first chunk writes the part's sums
        thin::a_b(dyc, ldy, n, out, rdt, rp, up);
        thin::at_b(dyc, ldy, n, out, tp + i * rp, rp, vtp, add);
        if (dbp) thin::col_sum_add(dyc, ldy, n, out, dbp);
        thin::at_b(xp + i * in, in, n, in, up, rp, xtup, add);
        if (dxp) thin::a_wide(up, n, rp, lt, in, nullptr, dxp + i * in, in);
      }
    });

    std::vector<at::Tensor> dcores(K), dranks(K - 1);
    for (int64_t k = 0; k < K; ++k) dcores[k] = at::empty(cores[k].sizes(), options);
    for (int64_t j = 0; j < K - 1; ++j) dranks[j] = at::empty(ranks[j].sizes(), options);
    both_sides(
        threads,
        [&] {
          // dL (in, r_d): the parts' Xᵀ·U, which carry diag(d_d) through Rd.
          float* G = scratch(2, in * r);
          const float* part = data(xtu);
          for (int64_t i = 0; i < in; ++i)
            for (int64_t j = 0; j < r; ++j) G[i * r + j] = part[i * rp + j];
          for (int64_t p = 1; p < parts; ++p)
            for (int64_t i = 0; i < in; ++i)
              for (int64_t j = 0; j < r; ++j) G[i * r + j] += part[(p * in + i) * rp + j];
          peel_input_side(c, prefix, G, dcores, dranks);
        },
        [&] {
          // V (r_d, out) from the parts' Vᵀ; d_d's gradient is the row sums of R ⊙ V and
          // dR = diag(d_d)·V.
          float* part = vt.data_ptr<float>();
          for (int64_t p = 1; p < parts; ++p)
            for (int64_t i = 0; i < out * rp; ++i) part[i] += part[p * out * rp + i];
          float* G = scratch(2, r * out);
          cpu::transpose(part, out, r, rp, G, out, out);
          row_bond_gradient(data(R), G, r, out, mid, dranks[d - 1].data_ptr<float>());
          peel_output_side(c, suffix, G, dcores, dranks);
        });

    at::Tensor dbias;
    if (has_bias) dbias = parts == 1 ? db[0] : db.sum(0);
    variable_list result{dx};
    result.insert(result.end(), dcores.begin(), dcores.end());
    result.insert(result.end(), dranks.begin(), dranks.end());
    if (has_bias) result.push_back(dbias);
    result.push_back(at::Tensor());  // train
    return result;
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
  if (!use_kernels(x, cores, ranks))
    return composite_merged_path(x, cores, ranks, bias);
  std::vector<at::Tensor> bias_list;
  if (bias.defined()) bias_list.push_back(bias);
  const auto needs_grad = [](const at::Tensor& t) { return t.defined() && t.requires_grad(); };
  const bool train = at::GradMode::is_enabled() &&
                     (needs_grad(x) || needs_grad(bias) ||
                      std::any_of(cores.begin(), cores.end(), needs_grad) ||
                      std::any_of(ranks.begin(), ranks.end(), needs_grad));
  return MergedPath::apply(x, at::TensorList(cores), at::TensorList(ranks),
                           at::TensorList(bias_list), train);
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
