#include "core/contract/merged_path.h"

#include <ATen/ATen.h>
#include <torch/autograd.h>

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

class MergedPath : public torch::autograd::Function<MergedPath> {
 public:
  // bias: empty, or the bias alone.
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, at::TensorList cores,
                            at::TensorList ranks, at::TensorList bias) {
    const int64_t d = static_cast<int64_t>(cores.size()) / 2;
    auto prefix = prefix_merges(cores, ranks, d);
    auto suffix = suffix_merges(cores, ranks, d);
    const auto& L = prefix.back();
    const auto& R = suffix.front();
    auto mid = ranks[d - 1];
    auto T = at::mm(x, L);
    auto Rd = mid.unsqueeze(1) * R;
    auto y = bias.empty() ? at::mm(T, Rd) : at::addmm(bias[0], T, Rd);

    variable_list saved{x, T};
    saved.insert(saved.end(), prefix.begin(), prefix.end());
    saved.insert(saved.end(), suffix.begin(), suffix.end());
    saved.insert(saved.end(), cores.begin(), cores.end());
    saved.insert(saved.end(), ranks.begin(), ranks.end());
    ctx->save_for_backward(saved);
    ctx->saved_data["d"] = d;
    ctx->saved_data["bias"] = !bias.empty();
    return y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const int64_t d = ctx->saved_data["d"].toInt();
    const int64_t K = 2 * d;
    const bool has_bias = ctx->saved_data["bias"].toBool();
    auto saved = ctx->get_saved_variables();
    const auto& x = saved[0];
    const auto& T = saved[1];
    const at::Tensor* prefix = &saved[2];
    const at::Tensor* suffix = prefix + d;
    const at::Tensor* cores = suffix + d;
    const at::Tensor* ranks = cores + K;
    const auto& L = prefix[d - 1];
    const auto& R = suffix[0];
    const auto& mid = ranks[d - 1];
    const auto& dy = grads[0];

    // Four batch GEMMs; diag(d_d) is applied on the small side.
    auto V = at::mm(T.t(), dy);  // (r_d, out)
    auto U = at::mm(dy, R.t());  // (B, r_d)
    auto XtU = at::mm(x.t(), U);  // (in, r_d)
    at::Tensor dx;
    if (ctx->needs_input_grad(0)) dx = at::mm(U, (L * mid).t());

    variable_list dcores(K), dranks(K - 1);
    dranks[d - 1] = (R * V).sum(1);
    auto dL = XtU * mid;
    auto dR = mid.unsqueeze(1) * V;

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

    variable_list out{dx};
    out.insert(out.end(), dcores.begin(), dcores.end());
    out.insert(out.end(), dranks.begin(), dranks.end());
    if (has_bias) out.push_back(dy.sum(0));
    return out;
  }
};

}  // namespace

at::Tensor merged_path(const at::Tensor& x, const std::vector<at::Tensor>& cores,
                       const std::vector<at::Tensor>& ranks, const at::Tensor& bias) {
  TORCH_CHECK(!cores.empty() && cores.size() % 2 == 0 && ranks.size() + 1 == cores.size(),
              "merged_path: needs 2d cores and 2d-1 rank vectors, got ", cores.size(), " and ",
              ranks.size());
  TORCH_CHECK(x.dim() == 2, "merged_path: x must be (B, in), got ", x.sizes());
  std::vector<at::Tensor> bias_list;
  if (bias.defined()) bias_list.push_back(bias);
  return MergedPath::apply(x, at::TensorList(cores), at::TensorList(ranks),
                           at::TensorList(bias_list));
}

int64_t merged_path_macs(const std::vector<int64_t>& sizes, const std::vector<int64_t>& ranks,
                         int64_t batch) {
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
  return 3 * (batch * ranks[d] * (in + out) + merges);
}

}  // namespace comera
