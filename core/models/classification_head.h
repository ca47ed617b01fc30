#pragma once
// Sequence classification head (BERT pooler + classifier): [CLS] -> d×d (dense or TT) -> tanh
// -> dropout -> classes.
#include "core/models/model_config.h"
#include "core/models/switchable.h"

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

namespace comera {

class ClassificationHeadImpl : public torch::nn::Module {
 public:
  explicit ClassificationHeadImpl(const ModelConfig& config);
  // hidden: (B, T, d_model) -> logits (B, classes), from position 0 ([CLS]).
  at::Tensor forward(const at::Tensor& hidden);
  void pretty_print(std::ostream& stream) const override;

 private:
  LinearLayer pooler_, classifier_;
  double dropout_;
};

TORCH_MODULE(ClassificationHead);

}  // namespace comera
