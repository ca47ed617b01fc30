#pragma once
// The dense weight of a TT layer rebuilt by one einsum over the whole chain, independently of
// the layer's own contractions: the reference of the TTLinear tests.
#include <ATen/ATen.h>

#include <string>
#include <vector>

namespace comera::testing {

// Pruned entries (|d| < threshold) read as 0; gradient 0 there.
inline at::Tensor applied(const at::Tensor& d, double threshold) {
  return at::where(d.abs() >= threshold, d, at::zeros_like(d));
}

// W (in, out) = contraction of G_1 d_1 G_2 ⋯ d_{2d-1} G_2d over all bonds, modes row-major.
inline at::Tensor dense_weight(const std::vector<at::Tensor>& cores, const std::vector<at::Tensor>& ranks,
                        double threshold) {
  const size_t K = cores.size();
  std::string lhs, modes;
  std::vector<at::Tensor> operands;
  int64_t in = 1, out = 1;
  for (size_t k = 0; k < K; ++k) {
    const char bond_l = static_cast<char>('a' + k), bond_r = static_cast<char>('a' + k + 1);
    const char mode = static_cast<char>('A' + k);
    lhs += std::string(k ? "," : "") + bond_l + mode + bond_r;
    modes += mode;
    operands.push_back(cores[k]);
    (k < K / 2 ? in : out) *= cores[k].size(1);
    if (k + 1 < K) {
      lhs += std::string(",") + bond_r;
      operands.push_back(applied(ranks[k], threshold));
    }
  }
  return at::einsum(lhs + "->" + modes, operands).reshape({in, out});
}

}  // namespace comera::testing
