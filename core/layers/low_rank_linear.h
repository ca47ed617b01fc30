#pragma once
// Linear layer with a rank-r factorised weight W = A·B (A: out x r, B: r x in), trained as
// two dense factors: the plain low-rank baseline. Parameters "a", "b", "bias". The forward
// never forms W: y = (x·Bᵀ)·Aᵀ + bias.
#include "core/layers/dense_stand_in.h"

#include <torch/arg.h>
#include <torch/nn/cloneable.h>
#include <torch/nn/pimpl.h>

#include <cstdint>

namespace comera {

struct LowRankLinearOptions {
  LowRankLinearOptions(int64_t in, int64_t out, int64_t rank) : in_(in), out_(out), rank_(rank) {}
  TORCH_ARG(int64_t, in);
  TORCH_ARG(int64_t, out);
  TORCH_ARG(int64_t, rank);
  TORCH_ARG(bool, bias) = true;
};

class LowRankLinearImpl : public torch::nn::Cloneable<LowRankLinearImpl>, public DenseStandIn {
 public:
  explicit LowRankLinearImpl(LowRankLinearOptions options);

  void reset() override;
  void reset_parameters();
  // x: (..., in) -> (..., out).
  at::Tensor forward(const at::Tensor& x);
  // A·B, for checks and exports.
  at::Tensor weight() const;
  void pretty_print(std::ostream& stream) const override;
  std::vector<at::Tensor> own_form() const override { return {a, b}; }
  int64_t dense_in_place() const override { return options.in() * options.out(); }

  LowRankLinearOptions options;
  at::Tensor a, b, bias;  // bias undefined when options.bias() is false
};

TORCH_MODULE(LowRankLinear);

}  // namespace comera
