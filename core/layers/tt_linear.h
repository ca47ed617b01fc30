#pragma once
// Linear layer whose weight lives in tensor-train form with learnable rank vectors (METHOD §1).
// Parameters: "core0".."core{2d-1}" (r_{k-1}, s_k, r_k), "rank1".."rank{2d-1}" (d_k, applied
// masked: |d| < threshold counts as 0), "bias". The forward runs the merged path (METHOD §4).
#include "core/formats/tt_shape.h"
#include "core/layers/tensorized.h"

#include <torch/arg.h>
#include <torch/nn/cloneable.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace comera {

namespace contract {
struct ContractionPlan;
}

struct TTLinearOptions {
  // ranks: 2d+1 entries with boundary 1s (TTMLinear, which shares these settings: d+1).
  TTLinearOptions(std::vector<int64_t> in_modes, std::vector<int64_t> out_modes,
                  std::vector<int64_t> ranks)
      : in_modes_(std::move(in_modes)), out_modes_(std::move(out_modes)), ranks_(std::move(ranks)) {}
  TORCH_ARG(std::vector<int64_t>, in_modes);
  TORCH_ARG(std::vector<int64_t>, out_modes);
  TORCH_ARG(std::vector<int64_t>, ranks);
  TORCH_ARG(bool, bias) = true;
  TORCH_ARG(double, threshold) = 1e-2;
};

class TTLinearImpl : public torch::nn::Cloneable<TTLinearImpl>, public Tensorized {
 public:
  explicit TTLinearImpl(TTLinearOptions options);

  void reset() override;
  void reset_parameters() override;
  std::vector<double> core_init_scales() const override { return init_scales_; }
  // x: (..., in) -> (..., out). Never forms W.
  at::Tensor forward(const at::Tensor& x);
  void pretty_print(std::ostream& stream) const override;

  const TTShape& shape() const { return shape_; }
  // Contraction plan for forward and backward (core/contract/plan.h, chosen by the tuner);
  // null, the default, is the merged path. A plan depends on d only, so it survives truncation.
  void set_plan(std::shared_ptr<const contract::ContractionPlan> plan) { plan_ = std::move(plan); }
  const std::shared_ptr<const contract::ContractionPlan>& plan() const { return plan_; }

  std::string layer_kind() const override { return "tt_linear"; }
  const CoreChain& chain() const override { return shape_.chain(); }
  std::vector<at::Tensor> rank_vectors() const override { return rank_vectors_; }
  std::vector<at::Tensor> cores() const override { return cores_; }
  double threshold() const override { return options.threshold(); }
  int64_t dense_equivalent() const override;
  // Clears the gradients of every core and rank vector. Also updates options.ranks() so that clone() rebuilds the truncated shape. A bond with no
  // surviving entry makes the layer output its bias alone; truncation then keeps one slice on
  // every bond (rank 1 everywhere, the dead bond's entry still pruned, nothing folded), so the
  // layer stays valid, cheap, and exactly bias-only with zero gradients.
  TruncationResult truncate(bool fold = false) override;

  TTLinearOptions options;
  at::Tensor bias;  // undefined when options.bias() is false

 private:
  std::vector<double> init_scales_;  // set by reset_parameters()
  TTShape shape_;
  std::vector<at::Tensor> cores_;         // core k: (r_{k-1}, s_k, r_k)
  std::vector<at::Tensor> rank_vectors_;  // d_k: (r_k), k = 1..2d-1
  std::shared_ptr<const contract::ContractionPlan> plan_;
};

TORCH_MODULE(TTLinear);

// Layers that read the same x (a self-attention's Q, K and V): layer->forward(x) for each, in
// order, as one pass on the merged path (merged_paths); one by one where a layer has a plan.
std::vector<at::Tensor> tt_linear_shared_input(const at::Tensor& x,
                                               const std::vector<TTLinearImpl*>& layers);

}  // namespace comera
