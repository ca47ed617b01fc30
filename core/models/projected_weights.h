#pragma once
// A model that names the weights GaLore projects: the 2-D weights of the layers the low-rank
// baselines replace (a transformer's attention and FFN linears). GaLore (core/training) finds
// them through this interface, so it names no layer of any model.
#include <ATen/core/Tensor.h>

#include <vector>

namespace comera {

class ProjectedWeights {
 public:
  virtual ~ProjectedWeights() = default;
  virtual std::vector<at::Tensor> projected_weights() const = 0;
};

}  // namespace comera
