#include "core/layers/ttm_lookup.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/autograd.h>

#include <algorithm>

namespace comera {

at::Tensor chain_rows(const std::vector<at::Tensor>& tables, const std::vector<at::Tensor>& idx) {
  const int64_t n = idx.at(0).numel();
  int64_t width = tables[0].size(2);
  at::Tensor acc = tables[0].index_select(0, idx[0]).reshape({n, width, tables[0].size(3)});
  for (size_t s = 1; s < tables.size(); ++s) {
    const at::Tensor& t = tables[s];
    const at::Tensor slices = t.index_select(0, idx[s]).reshape({n, t.size(1), t.size(2) * t.size(3)});
    width *= t.size(2);
    acc = at::bmm(acc, slices).reshape({n, width, t.size(3)});
  }
  return acc.reshape({n, width});
}

namespace {

// C (m x p) (+)= A (m x k) · B (k x p), all row-major and contiguous. Sizes here are tens, so
// a BLAS call per product costs more in overhead than the arithmetic; four rows of C at a time
// reuse each loaded row of B four times and the inner loop vectorises.
template <typename T>
void small_gemm(const T* __restrict A, const T* __restrict B, T* __restrict C, int64_t m,
                int64_t k, int64_t p, bool accumulate) {
  if (!accumulate) std::fill(C, C + m * p, T(0));
  int64_t i = 0;
  for (; i + 4 <= m; i += 4) {
    T* __restrict c0 = C + i * p;
    T* __restrict c1 = c0 + p;
    T* __restrict c2 = c1 + p;
    T* __restrict c3 = c2 + p;
    const T* a = A + i * k;
    for (int64_t l = 0; l < k; ++l) {
      const T a0 = a[l], a1 = a[k + l], a2 = a[2 * k + l], a3 = a[3 * k + l];
      const T* __restrict b = B + l * p;
      for (int64_t j = 0; j < p; ++j) {
        const T bj = b[j];
        c0[j] += a0 * bj;
        c1[j] += a1 * bj;
        c2[j] += a2 * bj;
        c3[j] += a3 * bj;
      }
    }
  }
  for (; i < m; ++i) {
    T* __restrict c = C + i * p;
    for (int64_t l = 0; l < k; ++l) {
      const T a = A[i * k + l];
      const T* __restrict b = B + l * p;
      for (int64_t j = 0; j < p; ++j) c[j] += a * b[j];
    }
  }
}

// left (VL, EL, R), right (VR, R, ER) -> (N, EL * ER).
template <typename T>
at::Tensor pair_forward(const at::Tensor& left, const at::Tensor& right, const at::Tensor& ia,
                        const at::Tensor& ib) {
  const int64_t n = ia.numel(), el = left.size(1), r = left.size(2), er = right.size(2);
  at::Tensor out = at::empty({n, el * er}, left.options());
  const T* lp = left.data_ptr<T>();
  const T* rp = right.data_ptr<T>();
  const int64_t* a = ia.data_ptr<int64_t>();
  const int64_t* b = ib.data_ptr<int64_t>();
  T* op = out.data_ptr<T>();
  at::parallel_for(0, n, 16, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      small_gemm(lp + a[i] * el * r, rp + b[i] * r * er, op + i * el * er, el, r, er, false);
  });
  return out;
}

// Gradients of both tables. Ids repeat across the batch, so each worker accumulates into its
// own copy of the (small) tables and the copies are summed at the end.
template <typename T>
std::pair<at::Tensor, at::Tensor> pair_backward(const at::Tensor& left, const at::Tensor& right,
                                                const at::Tensor& ia, const at::Tensor& ib,
                                                const at::Tensor& grad) {
  const int64_t n = ia.numel(), el = left.size(1), r = left.size(2), er = right.size(2);
  const int64_t workers = std::max<int64_t>(1, std::min<int64_t>(at::get_num_threads(), n / 64));
  const at::Tensor left_t = left.transpose(1, 2).contiguous();    // (VL, R, EL)
  const at::Tensor right_t = right.transpose(1, 2).contiguous();  // (VR, ER, R)
  at::Tensor g_left = at::zeros({workers, left.size(0), el, r}, left.options());
  at::Tensor g_right = at::zeros({workers, right.size(0), r, er}, right.options());
  const T* lt = left_t.data_ptr<T>();
  const T* rt = right_t.data_ptr<T>();
  const T* gp = grad.data_ptr<T>();
  const int64_t* a = ia.data_ptr<int64_t>();
  const int64_t* b = ib.data_ptr<int64_t>();
  T* glp = g_left.data_ptr<T>();
  T* grp = g_right.data_ptr<T>();
  at::parallel_for(0, workers, 1, [&](int64_t w_begin, int64_t w_end) {
    for (int64_t w = w_begin; w < w_end; ++w) {
      T* gl = glp + w * left.numel();
      T* gr = grp + w * right.numel();
      for (int64_t i = n * w / workers; i < n * (w + 1) / workers; ++i) {
        const T* g = gp + i * el * er;
        // d left[a] += G · right[b]^T ; d right[b] += left[a]^T · G
        small_gemm(g, rt + b[i] * er * r, gl + a[i] * el * r, el, er, r, true);
        small_gemm(lt + a[i] * r * el, g, gr + b[i] * r * er, r, el, er, true);
      }
    }
  });
  return {g_left.sum(0), g_right.sum(0)};
}

class PairRows : public torch::autograd::Function<PairRows> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& left,
                            const at::Tensor& right, const at::Tensor& ia, const at::Tensor& ib) {
    ctx->save_for_backward({left, right, ia, ib});
    at::Tensor out;
    AT_DISPATCH_FLOATING_TYPES(left.scalar_type(), "pair_rows",
                               [&] { out = pair_forward<scalar_t>(left, right, ia, ib); });
    return out;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor grad = grads[0].contiguous();
    std::pair<at::Tensor, at::Tensor> g;
    AT_DISPATCH_FLOATING_TYPES(saved[0].scalar_type(), "pair_rows_backward", [&] {
      g = pair_backward<scalar_t>(saved[0], saved[1], saved[2], saved[3], grad);
    });
    return {g.first, g.second, at::Tensor(), at::Tensor()};
  }
};

}  // namespace

at::Tensor pair_rows(const at::Tensor& left, const at::Tensor& right, const at::Tensor& ia,
                     const at::Tensor& ib) {
  const auto type = left.scalar_type();
  if (!left.device().is_cpu() || (type != at::kFloat && type != at::kDouble))
    return chain_rows({left, right}, {ia, ib});
  const int64_t el = left.size(2), r = left.size(3), er = right.size(2);
  return PairRows::apply(left.reshape({left.size(0), el, r}).contiguous(),
                         right.reshape({right.size(0), r, er}).contiguous(),
                         ia.contiguous(), ib.contiguous());
}

}  // namespace comera
