#include "search/tuner/tuning_key.h"

#include "core/formats/core_chain.h"
#include "search/store/layer_ranks.h"

#include <c10/core/ScalarType.h>

#include <cmath>

namespace comera::tuner {

int64_t token_bucket(int64_t tokens) {
  if (tokens <= 1) return 1;
  return int64_t{1} << static_cast<int>(std::lround(std::log2(static_cast<double>(tokens))));
}

std::string dtype_name(at::ScalarType dtype) {
  switch (dtype) {
    case at::kFloat: return "float32";
    case at::kDouble: return "float64";
    case at::kHalf: return "float16";
    case at::kBFloat16: return "bfloat16";
    default: return c10::toString(dtype);
  }
}

store::KernelKey kernel_key(const TTShape& shape, int64_t tokens, at::ScalarType dtype,
                            const Environment& env) {
  return {join_dims(shape.in_modes()) + "|" + join_dims(shape.out_modes()),
          store::format_ranks(shape.ranks()),
          token_bucket(tokens),
          dtype_name(dtype),
          env.device,
          env.threads,
          env.torch_version};
}

}  // namespace comera::tuner
