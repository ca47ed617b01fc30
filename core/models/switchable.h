#pragma once
// Layers that the config builds dense or tensorized (METHOD §7): one call site in the model
// whatever the choice. The module is registered by the owner under its name.
#include "core/models/model_config.h"

#include <ATen/core/Tensor.h>

#include <functional>
#include <memory>
#include <vector>

namespace torch::nn {
class Module;
}

namespace comera {

class TTLinearImpl;

class SwitchableLayer {
 public:
  SwitchableLayer() = default;
  at::Tensor operator()(const at::Tensor& x) const { return forward_(x); }
  const std::shared_ptr<torch::nn::Module>& module() const { return module_; }

 protected:
  std::shared_ptr<torch::nn::Module> module_;
  std::function<at::Tensor(const at::Tensor&)> forward_;
};

// in -> out: torch Linear (weight N(0, 1/(in+out)) like the TT initialisation, bias
// U(±1/sqrt(out))), TTLinear or TTMLinear with the spec's modes and ranks, LowRankLinear or
// LteLinear.
class LinearLayer : public SwitchableLayer {
 public:
  LinearLayer() = default;
  LinearLayer(int64_t in, int64_t out, const LinearSpec& spec, double threshold);
  // (*layer)(x) for each, in order; TT layers all on the merged path run as one pass
  // (tt_linear_shared_input).
  static std::vector<at::Tensor> shared_input(const at::Tensor& x,
                                              const std::vector<const LinearLayer*>& layers);

 private:
  TTLinearImpl* tt_ = nullptr;  // the module when it is a TTLinear
  std::function<double(const at::Tensor&)> flops_;  // a call's FLOPs, forward and backward
};

// Word embedding: torch Embedding (N(0, 1)) or TTMEmbedding.
class EmbeddingLayer : public SwitchableLayer {
 public:
  EmbeddingLayer() = default;
  EmbeddingLayer(int64_t vocab, int64_t dim, const EmbeddingSpec& spec, double threshold);
  // The whole (vocab, dim) table, differentiable (the masked-LM decoder is tied to it).
  at::Tensor table() const { return table_(); }

 private:
  std::function<at::Tensor()> table_;
};

}  // namespace comera
