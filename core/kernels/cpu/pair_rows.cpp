#include "core/kernels/cpu/pair_rows.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/autograd.h>

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

namespace comera::cpu {

namespace {

// Rows [i, i + R) x columns [j, j + N vectors) of C (+)= A · B: R x N vectors of C stay in
// registers over the whole k loop.
template <typename T, int Bytes, int R, int N>
__attribute__((always_inline)) inline void micro_tile(const T* __restrict A, const T* __restrict B,
                                                      T* __restrict C, int64_t k, int64_t p,
                                                      int64_t i, int64_t j, bool accumulate) {
  typedef T vec __attribute__((vector_size(Bytes)));
  constexpr int64_t V = Bytes / sizeof(T);
  vec c[R][N] = {};
  for (int64_t l = 0; l < k; ++l) {
    vec b[N];
    for (int h = 0; h < N; ++h) std::memcpy(&b[h], B + l * p + j + h * V, sizeof b[h]);
    for (int r = 0; r < R; ++r) {
      const T a = A[(i + r) * k + l];
      for (int h = 0; h < N; ++h) c[r][h] += b[h] * a;
    }
  }
  for (int r = 0; r < R; ++r)
    for (int h = 0; h < N; ++h) {
      T* out = C + (i + r) * p + j + h * V;
      if (accumulate) {
        vec old;
        std::memcpy(&old, out, sizeof old);
        c[r][h] += old;
      }
      std::memcpy(out, &c[r][h], sizeof c[r][h]);
    }
}

// Rows [i, i + R) of C, column block by column block: two vectors, one vector, half a vector
// (for the narrow products of the lookup: 2, 4 or 8 columns), then scalar columns.
template <typename T, int Bytes, int R>
__attribute__((always_inline)) inline void row_block(const T* __restrict A, const T* __restrict B,
                                                     T* __restrict C, int64_t k, int64_t p,
                                                     int64_t i, bool accumulate) {
  constexpr int64_t V = Bytes / sizeof(T);
  int64_t j = 0;
  for (; j + 2 * V <= p; j += 2 * V) micro_tile<T, Bytes, R, 2>(A, B, C, k, p, i, j, accumulate);
  if (j + V <= p) micro_tile<T, Bytes, R, 1>(A, B, C, k, p, i, j, accumulate), j += V;
  if constexpr (Bytes > 16)
    if (j + 16 / static_cast<int64_t>(sizeof(T)) <= p)
      micro_tile<T, 16, R, 1>(A, B, C, k, p, i, j, accumulate), j += 16 / sizeof(T);
  for (int r = 0; r < R; ++r)
    for (int64_t jj = j; jj < p; ++jj) {
      T sum = accumulate ? C[(i + r) * p + jj] : T(0);
      for (int64_t l = 0; l < k; ++l) sum += A[(i + r) * k + l] * B[l * p + jj];
      C[(i + r) * p + jj] = sum;
    }
}

// C (m x p) (+)= A (m x k) · B (k x p), all row-major and contiguous. Sizes here are tens (or a
// few units), so a BLAS call per product costs more in overhead than the arithmetic. Bytes is
// the vector width (GCC/Clang vector extensions: 16 = SSE/NEON, 32 = AVX).
template <typename T, int Bytes>
__attribute__((always_inline)) inline void tiled_gemm(const T* __restrict A, const T* __restrict B,
                                                      T* __restrict C, int64_t m, int64_t k,
                                                      int64_t p, bool accumulate) {
  int64_t i = 0;
  for (; i + 4 <= m; i += 4) row_block<T, Bytes, 4>(A, B, C, k, p, i, accumulate);
  for (; i < m; ++i) row_block<T, Bytes, 1>(A, B, C, k, p, i, accumulate);
}

template <typename T>
using GemmFn = void (*)(const T*, const T*, T*, int64_t, int64_t, int64_t, bool);

template <typename T>
void gemm_baseline(const T* A, const T* B, T* C, int64_t m, int64_t k, int64_t p, bool acc) {
  tiled_gemm<T, 16>(A, B, C, m, k, p, acc);
}

#if defined(__GNUC__) && defined(__x86_64__)
// The build targets baseline x86-64 (SSE2); AVX2+FMA is chosen at run time where present.
template <typename T>
__attribute__((target("avx2,fma"))) void gemm_avx2(const T* A, const T* B, T* C, int64_t m,
                                                   int64_t k, int64_t p, bool acc) {
  tiled_gemm<T, 32>(A, B, C, m, k, p, acc);
}
#endif

template <typename T>
GemmFn<T> small_gemm() {
#if defined(__GNUC__) && defined(__x86_64__)
  static const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (avx2) return &gemm_avx2<T>;
#endif
  return &gemm_baseline<T>;
}

// Products whose rows are narrower than an AVX2 vector (the last core of a chain, whose right
// rank is 1: ER = 6 for the paper's table) run their columns past the last whole vector one
// scalar at a time; their transposes (ER x EL = right^T · left^T) are wide, so they are
// computed that way round (the lookup at 128 ids took 3.3 ms, mostly in those scalar columns).
template <typename T>
bool narrow(int64_t el, int64_t er) {
  return er * static_cast<int64_t>(sizeof(T)) < 32 && el > er;
}

// (rows x cols) -> (cols x rows), both row-major.
template <typename T>
void transpose_into(const T* in, T* out, int64_t rows, int64_t cols, bool accumulate) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      if (accumulate)
        out[j * rows + i] += in[i * cols + j];
      else
        out[j * rows + i] = in[i * cols + j];
    }
}

// left (VL, EL, R), right (VR, R, ER) -> (N, EL * ER).
template <typename T>
at::Tensor pair_forward(const at::Tensor& left, const at::Tensor& right, const at::Tensor& ia,
                        const at::Tensor& ib) {
  const int64_t n = ia.numel(), el = left.size(1), r = left.size(2), er = right.size(2);
  at::Tensor out = at::empty({n, el * er}, left.options());
  const int64_t* a = ia.data_ptr<int64_t>();
  const int64_t* b = ib.data_ptr<int64_t>();
  T* op = out.data_ptr<T>();
  const GemmFn<T> gemm = small_gemm<T>();
  if (narrow<T>(el, er)) {
    const at::Tensor left_t = left.transpose(1, 2).contiguous();    // (VL, R, EL)
    const at::Tensor right_t = right.transpose(1, 2).contiguous();  // (VR, ER, R)
    const T* lt = left_t.data_ptr<T>();
    const T* rt = right_t.data_ptr<T>();
    at::parallel_for(0, n, 16, [&](int64_t begin, int64_t end) {
      std::vector<T> row_t(static_cast<size_t>(er * el));
      for (int64_t i = begin; i < end; ++i) {
        gemm(rt + b[i] * er * r, lt + a[i] * r * el, row_t.data(), er, r, el, false);
        transpose_into(row_t.data(), op + i * el * er, er, el, false);
      }
    });
    return out;
  }
  const T* lp = left.data_ptr<T>();
  const T* rp = right.data_ptr<T>();
  at::parallel_for(0, n, 16, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      gemm(lp + a[i] * el * r, rp + b[i] * r * er, op + i * el * er, el, r, er, false);
  });
  return out;
}

// The ids 0..n-1 ordered by key (a table row; a counting sort), and where each of `parts` parts
// of that order begins, no key split between two parts: each part then owns the gradient rows
// of its keys, and threads write them without copies or locks.
struct Owned {
  std::vector<int64_t> order, begin;  // begin: parts + 1 entries, the last n
};

Owned owned_by(const int64_t* key, int64_t n, int64_t rows, int64_t parts) {
  Owned o;
  std::vector<int64_t> start(static_cast<size_t>(rows) + 1, 0);
  for (int64_t i = 0; i < n; ++i) ++start[key[i] + 1];
  for (int64_t k = 0; k < rows; ++k) start[k + 1] += start[k];
  o.order.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) o.order[start[key[i]]++] = i;
  for (int64_t p = 0; p < parts; ++p) {
    int64_t at = std::max(n * p / parts, o.begin.empty() ? int64_t{0} : o.begin.back());
    while (at > 0 && at < n && key[o.order[at]] == key[o.order[at - 1]]) ++at;
    o.begin.push_back(at);
  }
  o.begin.push_back(n);
  return o;
}

// Gradients of both tables. Ids repeat across the batch, so each table's gradient is split by
// the rows it owns (owned_by): the left one in the ids' order by left row, the right one by
// right row, both in one parallel region.
template <typename T>
std::pair<at::Tensor, at::Tensor> pair_backward(const at::Tensor& left, const at::Tensor& right,
                                                const at::Tensor& ia, const at::Tensor& ib,
                                                const at::Tensor& grad) {
  const int64_t n = ia.numel(), el = left.size(1), r = left.size(2), er = right.size(2);
  const int64_t parts = std::max<int64_t>(1, std::min<int64_t>(at::get_num_threads(), n / 16));
  // Narrow rows: d right[b]^T += G^T · left[a], accumulated transposed (VR, ER, R).
  const bool wide_t = narrow<T>(el, er);
  const at::Tensor left_t = left.transpose(1, 2).contiguous();    // (VL, R, EL)
  const at::Tensor right_t = right.transpose(1, 2).contiguous();  // (VR, ER, R)
  at::Tensor g_left = at::zeros(left.sizes(), left.options());
  at::Tensor g_right = wide_t ? at::zeros({right.size(0), er, r}, right.options())
                              : at::zeros(right.sizes(), right.options());
  const T* lp = left.data_ptr<T>();
  const T* lt = left_t.data_ptr<T>();
  const T* rt = right_t.data_ptr<T>();
  const T* gp = grad.data_ptr<T>();
  const int64_t* a = ia.data_ptr<int64_t>();
  const int64_t* b = ib.data_ptr<int64_t>();
  T* gl = g_left.data_ptr<T>();
  T* gr = g_right.data_ptr<T>();
  const Owned by_left = owned_by(a, n, left.size(0), parts), by_right = owned_by(b, n, right.size(0), parts);
  const GemmFn<T> gemm = small_gemm<T>();
  at::parallel_for(0, parts, 1, [&](int64_t p_begin, int64_t p_end) {
    std::vector<T> g_t(wide_t ? static_cast<size_t>(er * el) : 0);
    for (int64_t p = p_begin; p < p_end; ++p) {
      // d left[a] += G · right[b]^T
      for (int64_t j = by_left.begin[p]; j < by_left.begin[p + 1]; ++j) {
        const int64_t i = by_left.order[j];
        gemm(gp + i * el * er, rt + b[i] * er * r, gl + a[i] * el * r, el, er, r, true);
      }
      // d right[b] += left[a]^T · G
      for (int64_t j = by_right.begin[p]; j < by_right.begin[p + 1]; ++j) {
        const int64_t i = by_right.order[j];
        const T* g = gp + i * el * er;
        if (wide_t) {
          transpose_into(g, g_t.data(), el, er, false);
          gemm(g_t.data(), lp + a[i] * el * r, gr + b[i] * er * r, er, el, r, true);
        } else {
          gemm(lt + a[i] * r * el, g, gr + b[i] * r * er, r, el, er, true);
        }
      }
    }
  });
  if (wide_t) g_right = g_right.transpose(1, 2).contiguous();
  return {g_left, g_right};
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

bool pair_rows_supported(const at::Tensor& left, const at::Tensor& ia, const at::Tensor& ib) {
  const auto type = left.scalar_type();
  return left.device().is_cpu() && (type == at::kFloat || type == at::kDouble) &&
         ia.scalar_type() == at::kLong && ib.scalar_type() == at::kLong;
}

at::Tensor pair_rows(const at::Tensor& left, const at::Tensor& right, const at::Tensor& ia,
                     const at::Tensor& ib) {
  const int64_t el = left.size(2), r = left.size(3), er = right.size(2);
  return PairRows::apply(left.reshape({left.size(0), el, r}).contiguous(),
                         right.reshape({right.size(0), r, er}).contiguous(),
                         ia.contiguous(), ib.contiguous());
}

}  // namespace comera::cpu
