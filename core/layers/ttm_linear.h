#pragma once
// Linear layer whose weight is a TT matrix (TTM form, Novikov et al. 2015): core k maps input
// mode n_k to output mode m_k, shape (r_{k-1}, n_k, m_k, r_k), with learnable rank vectors
// between cores as in TTLinear. Unlike TTLinear's chain (all input modes, then all output
// modes), no bond bounds W's matrix rank: at the same parameters a TTM weight can be full rank.
// The forward forms W and multiplies: cheap for the small layers this format is for; no
// contraction plans.
#include "core/formats/ttm_shape.h"
#include "core/layers/tensorized.h"
#include "core/layers/tt_linear.h"

#include <torch/nn/cloneable.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <vector>

namespace comera {

// TTLinear's settings; here ranks has d+1 entries with boundary 1s.
using TTMLinearOptions = TTLinearOptions;

class TTMLinearImpl : public torch::nn::Cloneable<TTMLinearImpl>, public Tensorized {
 public:
  explicit TTMLinearImpl(TTMLinearOptions options);

  void reset() override;
  void reset_parameters() override;
  std::vector<double> core_init_scales() const override { return init_scales_; }
  // x: (..., in) -> (..., out) = x W + bias.
  at::Tensor forward(const at::Tensor& x);
  // W (in, out), masked rank vectors applied; differentiable.
  at::Tensor weight() const;
  // Multiply-adds of one weight() at the current ranks (its GEMMs).
  int64_t weight_macs() const;
  void pretty_print(std::ostream& stream) const override;

  int64_t in_features() const { return shape_.vocab(); }
  int64_t out_features() const { return shape_.dim(); }

  std::string layer_kind() const override { return "ttm_linear"; }
  const CoreChain& chain() const override { return shape_.chain(); }
  std::vector<at::Tensor> rank_vectors() const override { return rank_vectors_; }
  std::vector<at::Tensor> cores() const override { return cores_; }
  double threshold() const override { return options.threshold(); }
  int64_t dense_equivalent() const override { return in_features() * out_features(); }
  // As TTLinear's: a bond with no survivor leaves the bias alone (truncate_chain).
  TruncationResult truncate(bool fold = false) override;

  TTMLinearOptions options;
  at::Tensor bias;  // undefined when options.bias() is false

 private:
  std::vector<double> init_scales_;  // set by reset_parameters()
  TTMShape shape_;                   // rows = in (modes n_k), columns = out (modes m_k)
  std::vector<at::Tensor> cores_;         // core k: (r_{k-1}, n_k, m_k, r_k)
  std::vector<at::Tensor> rank_vectors_;  // d_k: (r_k), k = 1..d-1
};

TORCH_MODULE(TTMLinear);

}  // namespace comera
