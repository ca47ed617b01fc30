#pragma once
// The merged contraction path of a TT matrix (METHOD §4), for any d >= 1: merge the input-side
// cores into L (in, r_d) and the output-side cores into R (r_d, out), then Y = (X·L)·diag(d_d)·R
// + bias. Batch work is B·r_d·(in+out) multiply-adds forward and twice that backward; W is never
// formed.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace comera {

// x: (..., in) -> (..., out), no reshape of x or of the result under autograd. cores: the 2d cores (r_{k-1}, s_k, r_k). ranks: the 2d-1 rank vectors as applied
// (already masked). bias: (out) or undefined. Differentiable in x, every core, every rank vector
// and the bias. float32 on a CPU where thin::enabled() runs the batch GEMMs with the AVX-512
// kernels of thin_gemm.h (r_d padded to a multiple of 16, rows split across threads) and an
// analytic backward that reuses the saved partial merges; otherwise (any device or dtype, or the
// fast kernels off) ATen matmuls under ordinary autograd. In a bf16 forward (precision.h): the
// merges in float32, the batch GEMMs in bf16, from 2048 rows; fewer rows run in float32.
at::Tensor merged_path(const at::Tensor& x, const std::vector<at::Tensor>& cores,
                       const std::vector<at::Tensor>& ranks, const at::Tensor& bias);

// One layer's operands for merged_paths, as merged_path takes them.
struct MergedPathLayer {
  std::vector<at::Tensor> cores, ranks;
  at::Tensor bias;
};

// Layers that read the same x (a self-attention's Q, K and V): merged_path for each, in order.
// On the kernel path they run as one: their merges shared out between the threads, x read once
// per chunk of rows for all of them, and one dX.
std::vector<at::Tensor> merged_paths(const at::Tensor& x, const std::vector<MergedPathLayer>& layers);

// Multiply-adds of one forward + backward of merged_path at batch B (core merges included).
// sizes: s_1..s_2d; ranks: r_0..r_2d; padded: count the batch GEMMs at r_d padded to 16, as the
// kernel path runs them (where r_d is within its limit).
int64_t merged_path_macs(const std::vector<int64_t>& sizes, const std::vector<int64_t>& ranks,
                         int64_t batch, bool padded);

}  // namespace comera
