#include "core/contract/merged_path.h"

#include "core/kernels/cpu/bf16_rows.h"
#include "core/kernels/cpu/blas_gemm.h"
#include "core/kernels/cpu/gemm_team.h"
#include "core/kernels/cpu/thin_gemm.h"
#include "core/kernels/cpu/thin_gemm_bf16.h"
#include "core/kernels/cpu/transpose.h"
#include "core/util/precision.h"

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

// bf16 scratch of one thread (the bf16 batch products' interleaved operands).
thin_bf16::bf16* bf16_scratch(int i, int64_t n) {
  thread_local std::vector<thin_bf16::bf16> buffers[4];
  auto& b = buffers[i];
  if (static_cast<int64_t>(b.size()) < n) b.resize(static_cast<size_t>(n));
  return b.data();
}

// Runs task(i, team) for i < n, spread over the threads biggest first (cost(i) estimates each):
// the sides of a group's chains are independent. A thread out of sides helps with the products
// of those still running (one layer's sides can differ fourfold).
template <typename Cost, typename Task>
void run_sides(int threads, int64_t n, const Cost& cost, const Task& task) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return cost(a) > cost(b); });
  const int team_size = static_cast<int>(std::min<int64_t>(threads, 2 * n));
  cpu::GemmTeam team(team_size, n);
#pragma omp parallel num_threads(team_size) if (team_size > 1)
  {
#pragma omp for schedule(dynamic, 1) nowait
    for (int64_t i = 0; i < n; ++i) {
      task(order[i], team);
      team.done();
    }
    team.help();
  }
}

// Input side: prefix[k] = c_0 diag(d_1) c_1 ⋯ c_k as (s_0⋯s_k, r_{k+1}) for k < d-1 (prefix[0]
// is c_0 itself), and L = prefix[d-1] written with its r_d columns padded to rp with zeros.
void merge_input_side(const Chain& c, int64_t rp, std::vector<at::Tensor>& prefix, float* Lp,
                      cpu::GemmTeam& team) {
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
    team.gemm(false, false, rows, sk * width, rk, P, rk, S, sk * width, out, sk * width);
    P = out;
    rows *= sk;
  }
  if (c.d == 1)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < rp; ++j) Lp[i * rp + j] = j < c.r[1] ? c.core[0][i * c.r[1] + j] : 0;
}

// Output side: suffix[k-d] = c_k diag(d_{k+1}) ⋯ c_{2d-1} as (r_k, s_k⋯s_{2d-1}) for k >= d
// (suffix[d-1] is c_{2d-1} itself); R = suffix[0].
void merge_output_side(const Chain& c, std::vector<at::Tensor>& suffix, cpu::GemmTeam& team) {
  const float* Q = c.core[c.K - 1];
  int64_t cols = c.s[c.K - 1];
  for (int64_t k = c.K - 2; k >= c.d; --k) {
    const int64_t rk = c.r[k], sk = c.s[k], rn = c.r[k + 1];
    // S = c_k·diag(d_{k+1}) as (r_k·s_k, r_{k+1}).
    float* S = scratch(0, rk * sk * rn);
    for (int64_t i = 0; i < rk * sk; ++i)
      for (int64_t j = 0; j < rn; ++j) S[i * rn + j] = c.core[k][i * rn + j] * c.rank[k + 1][j];
    float* out = suffix[k - c.d].data_ptr<float>();
    team.gemm(false, false, rk * sk, cols, rn, S, rn, Q, cols, out, cols);
    Q = out;
    cols *= sk;
  }
}

// Peels the input side: given dL (in, r_d), the gradients of c_{d-1}..c_0 and d_{d-1}..d_1.
void peel_input_side(const Chain& c, const std::vector<at::Tensor>& prefix, float* G,
                     std::vector<at::Tensor>& dcores, std::vector<at::Tensor>& dranks,
                     cpu::GemmTeam& team) {
  int64_t rows = c.in();  // rows of prefix[k] before the step, then of prefix[k-1]
  for (int64_t k = c.d - 1; k >= 1; --k) {
    const int64_t rk = c.r[k], sk = c.s[k], rn = c.r[k + 1];
    rows /= sk;
    const float* P = k == 1 ? c.core[0] : prefix[k - 1].data_ptr<float>();  // (rows, r_k)
    const float* d = c.rank[k];
    // G is the gradient of prefix[k] as (rows, s_k·r_{k+1}).
    float* dc = dcores[k].data_ptr<float>();
    team.gemm(true, false, rk, sk * rn, rows, P, rk, G, sk * rn, dc, sk * rn);
    for (int64_t a = 0; a < rk; ++a)
      for (int64_t j = 0; j < sk * rn; ++j) dc[a * sk * rn + j] *= d[a];
    float* dQ = scratch(1, rows * rk);
    team.gemm(false, true, rows, rk, sk * rn, G, sk * rn, c.core[k], sk * rn, dQ, rk);
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
                      std::vector<at::Tensor>& dcores, std::vector<at::Tensor>& dranks,
                      cpu::GemmTeam& team) {
  for (int64_t k = c.d; k <= c.K - 2; ++k) {
    const int64_t rk = c.r[k], sk = c.s[k], rn = c.r[k + 1];
    const auto& next = suffix[k - c.d + 1];  // (r_{k+1}, cols)
    const int64_t cols = next.size(1);
    const float* Qn = next.data_ptr<float>();
    const float* d = c.rank[k + 1];
    // G is the gradient of suffix[k-d] as (r_k·s_k, cols).
    float* dc = dcores[k].data_ptr<float>();
    team.gemm(false, true, rk * sk, rn, cols, G, cols, Qn, cols, dc, rn);
    for (int64_t i = 0; i < rk * sk; ++i)
      for (int64_t j = 0; j < rn; ++j) dc[i * rn + j] *= d[j];
    float* H = scratch(1, rn * cols);
    team.gemm(true, false, rn, cols, rk * sk, c.core[k], rn, G, cols, H, cols);
    row_bond_gradient(Qn, H, rn, cols, d, dranks[k].data_ptr<float>());
    std::swap(scratch(1), scratch(2));
    G = scratch(2).data();
  }
  std::copy(G, G + c.r[c.K - 1] * c.s[c.K - 1], dcores[c.K - 1].data_ptr<float>());
}

// low: a bf16 forward, whose batch products take the bf16 kernels (pairs along in and out, so
// both even); without AVX512-BF16 it takes the composite path, whose matmuls autocast runs in
// bf16 (oneDNN).
bool use_kernels(const at::Tensor& x, at::TensorList cores, at::TensorList ranks, bool low) {
  const int64_t K = static_cast<int64_t>(cores.size()), rank = cores[K / 2].size(0);
  if (!(thin::enabled() && cpu::has_blas_gemm<float>() && x.device().is_cpu() && rank > 0 &&
        thin::padded(rank) <= thin::kMaxPaddedRank))
    return false;
  if (low) {
    int64_t out = 1;
    for (int64_t k = K / 2; k < K; ++k) out *= cores[k].size(1);
    if (!thin_bf16::enabled() || x.size(-1) % 2 || out % 2 ||
        (x.scalar_type() != at::kFloat && x.scalar_type() != at::kBFloat16))
      return false;
  } else if (x.scalar_type() != at::kFloat) {
    return false;
  }
  for (const auto& t : cores)
    if (!t.device().is_cpu() || t.scalar_type() != at::kFloat || !t.is_contiguous()) return false;
  for (const auto& t : ranks)
    if (!t.device().is_cpu() || t.scalar_type() != at::kFloat || !t.is_contiguous()) return false;
  return true;
}

// Rows per chunk: a chunk of dY stays in L2 between the kernels that read it.
constexpr int64_t kChunkRows = 48;

// Outputs bigger than this (batch 32's: 12.6 MB for 768 columns, 50 MB for 3,072) outgrow the
// cache before their next reader comes: they are written with non-temporal stores. Batch 32
// measured 750-820 ms a step this way against 810-870 with a 24 MB bound (only the 50 MB ones
// streamed) and 860-940 with none; 2 MB gave the same as 8 at batches 8 and 32.
constexpr int64_t kStreamBytes = int64_t{8} << 20;

bool stream(int64_t rows, int64_t cols) {
  return rows * cols * static_cast<int64_t>(sizeof(float)) > kStreamBytes;
}

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

// Multiply-adds of merging one side of a chain (its peel costs twice that): the sides' weights
// when the threads share them out.
int64_t side_macs(const Chain& c, bool input) {
  int64_t macs = 0, n = input ? c.s[0] : c.s[c.K - 1];
  if (input)
    for (int64_t k = 1; k < c.d; ++k) macs += n * c.r[k] * c.s[k] * c.r[k + 1], n *= c.s[k];
  else
    for (int64_t k = c.K - 2; k >= c.d; --k) macs += c.r[k] * c.s[k] * c.r[k + 1] * n, n *= c.s[k];
  return macs;
}

// One layer of a group as the kernels see it: its chain, sizes, r_d padded to rp, and off, its
// first row in the group's stacked Lᵀ (and first column in the stacked U of the backward).
struct Member {
  Chain c;
  int64_t in, out = 1, r, rp, off;
  const float* mid;
  Member(at::TensorList cores, at::TensorList ranks, int64_t off_)
      : c(cores, ranks), in(c.in()), r(c.r[c.d]), rp(thin::padded(r)), off(off_), mid(c.rank[c.d]) {
    for (int64_t k = c.d; k < c.K; ++k) out *= c.s[k];
  }
};

// layout: per layer its core count and whether it has a bias; cores and ranks are the layers'
// lists one after another, bias the biases present. off accumulates the padded ranks.
std::vector<Member> members(at::TensorList cores, at::TensorList ranks,
                            const std::vector<int64_t>& layout) {
  std::vector<Member> m;
  size_t ci = 0, ri = 0;
  int64_t off = 0;
  for (size_t g = 0; g < layout.size(); g += 2) {
    const auto K = static_cast<size_t>(layout[g]);
    m.emplace_back(cores.slice(ci, K), ranks.slice(ri, K - 1), off);
    ci += K;
    ri += K - 1;
    off += m.back().rp;
  }
  return m;
}

thin_bf16::bf16* bf16_data(const at::Tensor& t) {
  return t.data_ptr<at::BFloat16>();
}

// A (k, n) float32 merge as bf16 pairs along its k rows (thin_bf16::pack_pairs).
at::Tensor pack(const at::Tensor& A, int64_t k, int64_t n) {
  auto P = at::empty({(k + 1) / 2, n, 2}, A.options().dtype(at::kBFloat16));
  thin_bf16::pack_pairs(data(A), n, k, n, bf16_data(P));
  return P;
}

// The kernel path for a group of layers reading the same x (one layer, or a self-attention's Q,
// K and V): core merges by BLAS with the chains' sides shared out between the threads, batch
// GEMMs by the thin kernels at r_d padded to rp (x read once per chunk for all the layers, and
// one dX for all), and a backward by hand from the saved merges. No ATen op runs except
// allocations. In a bf16 forward (low) the batch products take the bf16 kernels: the merges stay
// float32 and are packed as bf16 pairs, and T and Y are bf16. A float32 x (a layer norm's output)
// is narrowed a chunk at a time as it is read, and its gradient is written in float32, so that
// neither needs a pass of its own; a bf16 x gets a bf16 gradient.
class MergedGroup : public torch::autograd::Function<MergedGroup> {
 public:
  // bias: the biases present, in layer order. train: a backward will follow, so the transposed
  // operands it needs are made here, on the merges' threads.
  static variable_list forward(AutogradContext* ctx, const at::Tensor& x, at::TensorList cores,
                               at::TensorList ranks, at::TensorList bias,
                               std::vector<int64_t> layout, bool train, bool low) {
    const auto m = members(cores, ranks, layout);
    const auto G = static_cast<int64_t>(m.size());
    const int threads = at::get_num_threads();
    const int64_t in = m[0].in, B = x.numel() / in, RP = m.back().off + m.back().rp;
    const auto options = x.options().dtype(at::kFloat);
    auto out_sizes = x.sizes().vec();  // x's leading shape, then each layer's out
    // Per layer: the merges (prefix[d-1] is L padded to (in, rp)), Rd = diag(d_d)·R with rows
    // padded to rp and, for the backward, Rdᵀ (out, rp); the layers' Lᵀ stacked (RP, in).
    std::vector<std::vector<at::Tensor>> prefix(G), suffix(G);
    std::vector<at::Tensor> Rd(G), RdT(G), Y(G), T(G);
    at::Tensor LT;
    if (train) LT = at::empty({RP, in}, options);
    for (int64_t g = 0, ci = 0; g < G; ci += m[g].c.K, ++g) {
      const Chain& c = m[g].c;
      auto& pre = prefix[g];
      auto& suf = suffix[g];
      pre.resize(c.d);
      suf.resize(c.d);
      pre[0] = cores[ci];
      int64_t rows = c.s[0];
      for (int64_t k = 1; k + 1 < c.d; ++k) {
        rows *= c.s[k];
        pre[k] = at::empty({rows, c.r[k + 1]}, options);
      }
      pre[c.d - 1] = at::empty({in, m[g].rp}, options);
      suf[c.d - 1] = cores[ci + c.K - 1];
      int64_t out = c.s[c.K - 1];
      for (int64_t k = c.K - 2; k >= c.d; --k) {
        out *= c.s[k];
        suf[k - c.d] = at::empty({c.r[k], out}, options);
      }
      Rd[g] = at::empty({m[g].rp, m[g].out}, options);
      if (train) RdT[g] = at::empty({m[g].out, m[g].rp}, options);
    }
    run_sides(
        threads, 2 * G, [&](int64_t i) { return side_macs(m[i / 2].c, i % 2 == 0); },
        [&](int64_t i, cpu::GemmTeam& team) {
          const Member& l = m[i / 2];
          const int64_t g = i / 2;
          if (i % 2 == 0) {
            float* Lp = prefix[g][l.c.d - 1].data_ptr<float>();
            merge_input_side(l.c, l.rp, prefix[g], Lp, team);
            if (train) cpu::transpose(Lp, l.in, l.rp, l.rp, LT.data_ptr<float>() + l.off * in, in, in);
            return;
          }
          merge_output_side(l.c, suffix[g], team);
          const float* R = data(suffix[g][0]);
          if (train) cpu::transpose(R, l.r, l.out, l.out, RdT[g].data_ptr<float>(), l.rp, l.rp, l.mid);
          float* rd = Rd[g].data_ptr<float>();
          for (int64_t j = 0; j < l.r; ++j)
            for (int64_t o = 0; o < l.out; ++o) rd[j * l.out + o] = l.mid[j] * R[j * l.out + o];
          std::fill(rd + l.r * l.out, rd + l.rp * l.out, 0.0f);
        });

    auto X = x.contiguous();
    std::vector<const float*> bp(G, nullptr);
    for (int64_t g = 0, b = 0; g < G; ++g)
      if (layout[2 * g + 1]) bp[g] = data(bias[b++]);
    const auto batch_options = low ? options.dtype(at::kBFloat16) : options;
    for (int64_t g = 0; g < G; ++g) {
      T[g] = at::empty({B, m[g].rp}, batch_options);
      out_sizes.back() = m[g].out;
      Y[g] = at::empty(out_sizes, batch_options);
    }
    if (low) {
      // The merges as bf16 pairs: L and Rd along their rows (in, r_d) here, Rdᵀ and the stacked
      // Lᵀ along theirs (out, RP) for the backward.
      std::vector<at::Tensor> Lq(G), Rq(G);
      for (int64_t g = 0; g < G; ++g) {
        Lq[g] = pack(prefix[g][m[g].c.d - 1], in, m[g].rp);
        Rq[g] = pack(Rd[g], m[g].rp, m[g].out);
        if (train) RdT[g] = pack(RdT[g], m[g].out, m[g].rp);
      }
      if (train) LT = pack(LT, RP, in);
      // X becomes the bf16 rows that the backward reads.
      const float* wide = X.scalar_type() == at::kFloat ? data(X) : nullptr;
      if (wide) X = at::empty(X.sizes(), X.options().dtype(at::kBFloat16));
      auto* xp = bf16_data(X);
      for_parts(B, part_count(B, threads), [&](int64_t, int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; i += kChunkRows) {
          const int64_t n = std::min(kChunkRows, end - i);
          if (wide) cpu::float_to_bf16(wide + i * in, n * in, xp + i * in);
          for (int64_t g = 0; g < G; ++g) {
            const Member& l = m[g];
            auto* tp = bf16_data(T[g]) + i * l.rp;
            thin_bf16::a_b(xp + i * in, in, n, in, bf16_data(Lq[g]), l.rp, tp, l.rp);
            thin_bf16::a_wide(tp, l.rp, n, l.rp, bf16_data(Rq[g]), l.out, bp[g],
                              bf16_data(Y[g]) + i * l.out, l.out);
          }
        }
      });
    } else {
      const float* xp = data(X);
      for_parts(B, part_count(B, threads), [&](int64_t, int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; i += kChunkRows) {
          const int64_t n = std::min(kChunkRows, end - i);
          for (int64_t g = 0; g < G; ++g) {
            const Member& l = m[g];
            float* tp = T[g].data_ptr<float>() + i * l.rp;
            thin::a_b(xp + i * in, in, n, in, data(prefix[g][l.c.d - 1]), l.rp, l.rp, tp, l.rp);
            thin::a_wide(tp, l.rp, n, l.rp, data(Rd[g]), l.out, bp[g],
                         Y[g].data_ptr<float>() + i * l.out, l.out, stream(B, l.out));
          }
        }
      });
    }

    if (train) {
      variable_list saved{X, LT};
      for (int64_t g = 0; g < G; ++g) {
        saved.push_back(T[g]);
        saved.push_back(RdT[g]);
        saved.insert(saved.end(), prefix[g].begin(), prefix[g].end());
        saved.insert(saved.end(), suffix[g].begin(), suffix[g].end());
      }
      saved.insert(saved.end(), cores.begin(), cores.end());
      saved.insert(saved.end(), ranks.begin(), ranks.end());
      ctx->save_for_backward(saved);
      ctx->saved_data["layout"] = layout;
      ctx->saved_data["float_x"] = x.scalar_type() == at::kFloat;
    }
    return Y;
  }

  // Batch part per chunk of rows, layer by layer: U = dY·Rdᵀ into the group's stacked U, Vᵀ +=
  // dYᵀ·T, bias gradient += column sums of dY, dL += Xᵀ·U; then dX = U·Lᵀ for every layer at
  // once. Per-part sums are added after. Then the chains' sides are peeled, shared out between
  // the threads.
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto layout = ctx->saved_data["layout"].toIntVector();
    const auto saved = ctx->get_saved_variables();
    // saved: X, the stacked Lᵀ, per layer T, Rdᵀ, its d prefixes and d suffixes; then every
    // layer's cores and every layer's rank vectors.
    const auto G = static_cast<int64_t>(layout.size() / 2);
    std::vector<size_t> first(G);
    size_t at = 2;
    int64_t ncores = 0;
    for (int64_t g = 0; g < G; ++g) {
      first[g] = at;
      at += 2 + static_cast<size_t>(layout[2 * g]);
      ncores += layout[2 * g];
    }
    const at::TensorList cores(saved.data() + at, static_cast<size_t>(ncores));
    const at::TensorList ranks(saved.data() + at + ncores, static_cast<size_t>(ncores - G));
    const auto m = members(cores, ranks, layout);
    const at::Tensor &X = saved[0], &LT = saved[1];
    const int threads = at::get_num_threads();
    const int64_t in = X.size(-1), B = X.numel() / in, RP = m.back().off + m.back().rp;
    const bool low = X.scalar_type() == at::kBFloat16;
    const auto options = X.options().dtype(at::kFloat);
    const int64_t parts = part_count(B, threads);

    std::vector<at::Tensor> dY(G), vt(G), xtu(G), db(G);
    for (int64_t g = 0; g < G; ++g) {
      const Member& l = m[g];
      dY[g] = grads[g].to(X.scalar_type()).reshape({B, l.out});
      if (dY[g].stride(1) != 1) dY[g] = dY[g].contiguous();
      vt[g] = at::empty({parts, l.out, l.rp}, options);
      xtu[g] = at::empty({parts, in, l.rp}, options);
      db[g] = at::empty({parts, layout[2 * g + 1] ? l.out : 0}, options);
    }
    at::Tensor dx;
    const bool float_x = ctx->saved_data["float_x"].toBool();
    if (ctx->needs_input_grad(0)) dx = at::empty(X.sizes(), float_x ? options : X.options());
    // Zeroes part p's sums where it has no rows (the first chunk writes them otherwise).
    const auto clear_part = [&](int64_t p, bool empty) {
      for (int64_t g = 0; g < G; ++g) {
        if (db[g].size(1)) std::fill_n(db[g].data_ptr<float>() + p * m[g].out, m[g].out, 0.0f);
        if (empty) {
          std::fill_n(vt[g].data_ptr<float>() + p * m[g].out * m[g].rp, m[g].out * m[g].rp, 0.0f);
          std::fill_n(xtu[g].data_ptr<float>() + p * in * m[g].rp, in * m[g].rp, 0.0f);
        }
      }
    };
    if (low) {
      // As below, with the reductions over rows (Vᵀ and Xᵀ·U) on row pairs interleaved per chunk.
      int64_t widest = in;
      for (const Member& l : m) widest = std::max(widest, l.out);
      const auto* xp = bf16_data(X);
      auto* dxp = dx.defined() && !float_x ? bf16_data(dx) : nullptr;
      float* dxf = dx.defined() && float_x ? dx.data_ptr<float>() : nullptr;
      for_parts(B, parts, [&](int64_t p, int64_t begin, int64_t end) {
        clear_part(p, begin == end);
        auto* up = bf16_scratch(0, kChunkRows * RP);
        auto* ui = bf16_scratch(1, kChunkRows * RP);
        auto* xi = bf16_scratch(2, kChunkRows * in);
        auto* wi = bf16_scratch(3, kChunkRows * widest + kChunkRows * thin::kMaxPaddedRank);
        auto* ti = wi + kChunkRows * widest;
        for (int64_t i = begin; i < end; i += kChunkRows) {
          const int64_t n = std::min(kChunkRows, end - i), pairs = (n + 1) / 2;
          const bool add = i > begin;
          thin_bf16::interleave_rows(xp + i * in, in, n, in, xi);
          for (int64_t g = 0; g < G; ++g) {
            const Member& l = m[g];
            const int64_t ldy = dY[g].stride(0);
            const auto* dyc = bf16_data(dY[g]) + i * ldy;
            thin_bf16::a_b(dyc, ldy, n, l.out, bf16_data(saved[first[g] + 1]), l.rp, up + l.off,
                           RP);
            thin_bf16::interleave_rows(dyc, ldy, n, l.out, wi);
            thin_bf16::interleave_rows(bf16_data(saved[first[g]]) + i * l.rp, l.rp, n, l.rp, ti);
            thin_bf16::at_b(wi, l.out, pairs, l.out, ti, l.rp, l.rp,
                            vt[g].data_ptr<float>() + p * l.out * l.rp, l.rp, add);
            if (db[g].size(1))
              thin_bf16::col_sum_add(dyc, ldy, n, l.out, db[g].data_ptr<float>() + p * l.out);
          }
          thin_bf16::interleave_rows(up, RP, n, RP, ui);
          for (int64_t g = 0; g < G; ++g)
            thin_bf16::at_b(xi, in, pairs, in, ui + 2 * m[g].off, RP, m[g].rp,
                            xtu[g].data_ptr<float>() + p * in * m[g].rp, m[g].rp, add);
          if (dxp) thin_bf16::a_wide(up, RP, n, RP, bf16_data(LT), in, nullptr, dxp + i * in, in);
          if (dxf) thin_bf16::a_wide(up, RP, n, RP, bf16_data(LT), in, nullptr, dxf + i * in, in);
        }
      });
    } else {
      auto u = at::empty({parts, kChunkRows, RP}, options);
      float* dxp = dx.defined() ? dx.data_ptr<float>() : nullptr;
      const float *xp = data(X), *lt = data(LT);
      for_parts(B, parts, [&](int64_t p, int64_t begin, int64_t end) {
        float* up = u.data_ptr<float>() + p * kChunkRows * RP;
        clear_part(p, begin == end);
        for (int64_t i = begin; i < end; i += kChunkRows) {
          const int64_t n = std::min(kChunkRows, end - i);
          const bool add = i > begin;  // the first chunk writes the part's sums
          for (int64_t g = 0; g < G; ++g) {
            const Member& l = m[g];
            const int64_t ldy = dY[g].stride(0);
            const float* dyc = data(dY[g]) + i * ldy;
            const float* tp = data(saved[first[g]]) + i * l.rp;
            thin::a_b(dyc, ldy, n, l.out, data(saved[first[g] + 1]), l.rp, l.rp, up + l.off, RP);
            thin::at_b(dyc, ldy, n, l.out, tp, l.rp, l.rp, vt[g].data_ptr<float>() + p * l.out * l.rp,
                       l.rp, add);
            if (db[g].size(1)) thin::col_sum_add(dyc, ldy, n, l.out, db[g].data_ptr<float>() + p * l.out);
            thin::at_b(xp + i * in, in, n, in, up + l.off, RP, l.rp,
                       xtu[g].data_ptr<float>() + p * in * l.rp, l.rp, add);
          }
          if (dxp) thin::a_wide(up, RP, n, RP, lt, in, nullptr, dxp + i * in, in, stream(B, in));
        }
      });
    }

    std::vector<at::Tensor> dcores(ncores), dranks(ncores - G);
    for (int64_t k = 0; k < ncores; ++k) dcores[k] = at::empty(cores[k].sizes(), options);
    for (int64_t j = 0; j < ncores - G; ++j) dranks[j] = at::empty(ranks[j].sizes(), options);
    // Each layer's slices of those lists, and its saved merges.
    std::vector<std::vector<at::Tensor>> dc(G), dr(G), prefix(G), suffix(G);
    for (int64_t g = 0, ci = 0, ri = 0; g < G; ++g) {
      const int64_t K = m[g].c.K, d = m[g].c.d;
      dc[g].assign(dcores.begin() + ci, dcores.begin() + ci + K);
      dr[g].assign(dranks.begin() + ri, dranks.begin() + ri + K - 1);
      prefix[g].assign(saved.begin() + first[g] + 2, saved.begin() + first[g] + 2 + d);
      suffix[g].assign(saved.begin() + first[g] + 2 + d, saved.begin() + first[g] + 2 + 2 * d);
      ci += K;
      ri += K - 1;
    }
    run_sides(
        threads, 2 * G, [&](int64_t i) { return side_macs(m[i / 2].c, i % 2 == 0); },
        [&](int64_t i, cpu::GemmTeam& team) {
          const int64_t g = i / 2;
          const Member& l = m[g];
          if (i % 2 == 0) {
            // dL (in, r_d): the parts' Xᵀ·U, which carry diag(d_d) through Rd.
            float* Gm = scratch(2, in * l.r);
            const float* part = data(xtu[g]);
            for (int64_t a = 0; a < in; ++a)
              for (int64_t j = 0; j < l.r; ++j) Gm[a * l.r + j] = part[a * l.rp + j];
            for (int64_t p = 1; p < parts; ++p)
              for (int64_t a = 0; a < in; ++a)
                for (int64_t j = 0; j < l.r; ++j) Gm[a * l.r + j] += part[(p * in + a) * l.rp + j];
            peel_input_side(l.c, prefix[g], Gm, dc[g], dr[g], team);
            return;
          }
          // V (r_d, out) from the parts' Vᵀ; d_d's gradient is the row sums of R ⊙ V and
          // dR = diag(d_d)·V.
          float* part = vt[g].data_ptr<float>();
          const int64_t size = l.out * l.rp;
          for (int64_t p = 1; p < parts; ++p)
            for (int64_t j = 0; j < size; ++j) part[j] += part[p * size + j];
          float* Gm = scratch(2, l.r * l.out);
          cpu::transpose(part, l.out, l.r, l.rp, Gm, l.out, l.out);
          row_bond_gradient(data(suffix[g][0]), Gm, l.r, l.out, l.mid,
                            dr[g][l.c.d - 1].data_ptr<float>());
          peel_output_side(l.c, suffix[g], Gm, dc[g], dr[g], team);
        });

    variable_list result{dx};
    result.insert(result.end(), dcores.begin(), dcores.end());
    result.insert(result.end(), dranks.begin(), dranks.end());
    for (int64_t g = 0; g < G; ++g)
      if (layout[2 * g + 1]) result.push_back(parts == 1 ? db[g][0] : db[g].sum(0));
    result.push_back(at::Tensor());  // layout
    result.push_back(at::Tensor());  // train
    result.push_back(at::Tensor());  // low
    return result;
  }
};

// In a bf16 forward without the bf16 kernels, inputs of fewer rows take the float32 path:
// `bench layer --precision fp32,bf16` found the composite bf16 path (oneDNN) slower there (128
// rows: 1.3 against 0.6 ms for 768->768) and at best level from here up, where its bf16
// activations still halve what backward keeps. The bf16 kernels were as fast as the float32
// ones at 128 rows and faster from 512 (docs/precision.md), so they take every size.
constexpr int64_t kBf16MinRows = 2048;

// The composite path: the same merges and batch GEMMs as ATen ops under ordinary autograd.
at::Tensor composite_merged_path(const at::Tensor& x, at::TensorList cores, at::TensorList ranks,
                                 const at::Tensor& bias) {
  const int64_t d = static_cast<int64_t>(cores.size()) / 2;
  at::Tensor L, Rd;
  {
    // The merges are weight-sized, the same at any batch: float32 even in a bf16 forward, whose
    // many small bf16 products cost more (batch 1: 61 against 35 ms a step for the layers).
    const ForwardPrecision fp32(Precision::Fp32);
    L = prefix_merges(cores, ranks, d).back();
    Rd = ranks[d - 1].unsqueeze(1) * suffix_merges(cores, ranks, d).front();
  }
  L = compute_cast(L);
  Rd = compute_cast(Rd);
  const auto t = at::mm(x, L);
  return bias.defined() ? at::addmm(bias, t, Rd) : at::mm(t, Rd);
}

}  // namespace

std::vector<at::Tensor> merged_paths(const at::Tensor& x,
                                     const std::vector<MergedPathLayer>& layers) {
  TORCH_CHECK(!layers.empty(), "merged_paths: needs at least one layer");
  TORCH_CHECK(x.dim() >= 1, "merged_path: x must be (..., in), got a scalar");
  const bool low = lower_precision_forward(x.device());
  bool kernels = true;
  for (const auto& l : layers) {
    TORCH_CHECK(!l.cores.empty() && l.cores.size() % 2 == 0 && l.ranks.size() + 1 == l.cores.size(),
                "merged_path: needs 2d cores and 2d-1 rank vectors, got ", l.cores.size(), " and ",
                l.ranks.size());
    int64_t in = 1;
    for (size_t k = 0; k < l.cores.size() / 2; ++k) in *= l.cores[k].size(1);
    TORCH_CHECK(in == x.size(-1), "merged_path: x has ", x.size(-1), " columns, the layer reads ", in);
    kernels = kernels && use_kernels(x, l.cores, l.ranks, low);
  }
  if (low && !kernels && x.numel() < kBf16MinRows * x.size(-1)) {
    const ForwardPrecision fp32(Precision::Fp32);
    return merged_paths(float_activation(x), layers);
  }
  std::vector<at::Tensor> out;
  if (!kernels) {
    auto sizes = x.sizes().vec();
    // Cast once for all the layers (autocast would cast x again for each).
    const auto rows = compute_cast(x).reshape({-1, x.size(-1)});
    for (const auto& l : layers) {
      const auto y = composite_merged_path(rows, l.cores, l.ranks, l.bias);
      sizes.back() = y.size(1);
      out.push_back(y.view(sizes));
    }
    return out;
  }
  std::vector<at::Tensor> cores, ranks, bias;
  std::vector<int64_t> layout;
  const auto needs_grad = [](const at::Tensor& t) { return t.defined() && t.requires_grad(); };
  bool grad = needs_grad(x);
  for (const auto& l : layers) {
    cores.insert(cores.end(), l.cores.begin(), l.cores.end());
    ranks.insert(ranks.end(), l.ranks.begin(), l.ranks.end());
    if (l.bias.defined()) bias.push_back(l.bias);
    layout.push_back(static_cast<int64_t>(l.cores.size()));
    layout.push_back(l.bias.defined());
    grad = grad || needs_grad(l.bias) || std::any_of(l.cores.begin(), l.cores.end(), needs_grad) ||
           std::any_of(l.ranks.begin(), l.ranks.end(), needs_grad);
  }
  return MergedGroup::apply(x, at::TensorList(cores), at::TensorList(ranks), at::TensorList(bias),
                            layout, at::GradMode::is_enabled() && grad, low);
}

at::Tensor merged_path(const at::Tensor& x, const std::vector<at::Tensor>& cores,
                       const std::vector<at::Tensor>& ranks, const at::Tensor& bias) {
  return merged_paths(x, {MergedPathLayer{cores, ranks, bias}}).front();
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
