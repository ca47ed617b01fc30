#include "core/layers/tensorized.h"

#include <ATen/ATen.h>

namespace comera {

at::Tensor masked_rank_vector(const at::Tensor& d, double threshold) {
  return d * (d.abs() >= threshold).to(d.scalar_type());
}

}  // namespace comera
