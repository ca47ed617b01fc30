#include "core/models/classification_head.h"

#include "core/models/dropout.h"

#include <ATen/ATen.h>

#include <ostream>

namespace comera {

ClassificationHeadImpl::ClassificationHeadImpl(const ModelConfig& config)
    : pooler_(config.d_model, config.d_model, config.classifier, config.rank_threshold),
      classifier_(config.d_model, config.classes, LinearSpec{}, config.rank_threshold),
      dropout_(config.dropout) {
  register_module("pooler", pooler_.module());
  register_module("classifier", classifier_.module());
}

at::Tensor ClassificationHeadImpl::forward(const at::Tensor& hidden) {
  auto pooled = at::tanh(pooler_(hidden.select(1, 0)));
  return classifier_(fast_dropout(pooled, dropout_, is_training()));
}

void ClassificationHeadImpl::pretty_print(std::ostream& stream) const {
  stream << "comera::ClassificationHead(dropout=" << dropout_ << ")";
}

}  // namespace comera
