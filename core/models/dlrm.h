#pragma once
// DLRM (facebookresearch/dlrm): bottom MLP over the dense features, one sum-pooled embedding
// bag per categorical feature (dense EmbeddingBag, or TTMEmbeddingBag for the large tables),
// dot interaction, top MLP to a click logit.
#include "core/models/dlrm_config.h"
#include "core/models/switchable.h"

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <functional>
#include <vector>

namespace comera {

// vectors (B, V, D) -> (B, V(V-1)/2): the strictly lower triangle of each T·Tᵀ in row-major
// order ((1,0), (2,0), (2,1), (3,0), ...).
at::Tensor dot_interaction(const at::Tensor& vectors);

class DlrmImpl : public torch::nn::Module {
 public:
  explicit DlrmImpl(DlrmConfig config);
  // dense (B, dense_features) float; sparse (B, tables) int64, one id per table per example
  // -> (B) click logits (the probability is their sigmoid).
  at::Tensor forward(const at::Tensor& dense, const at::Tensor& sparse);
  void pretty_print(std::ostream& stream) const override;

  const DlrmConfig& config() const { return config_; }

 private:
  DlrmConfig config_;
  std::vector<LinearLayer> bottom_, top_;
  // Table t: (B) ids -> (B, embedding_dim), one-id bags.
  std::vector<std::function<at::Tensor(const at::Tensor&)>> tables_;
};

TORCH_MODULE(Dlrm);

}  // namespace comera
