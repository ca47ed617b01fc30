#pragma once
// The key a kernel choice is stored under: layer modes, the ranks the layer computes with
// (after physical truncation: the effective ranks), token count bucket, dtype, and the
// environment (device, threads, LibTorch version).
#include "core/formats/tt_shape.h"
#include "search/environment.h"
#include "search/store/kernel_choices.h"

#include <c10/core/ScalarType.h>

#include <cstdint>
#include <string>

namespace comera::tuner {

// The power of two nearest to `tokens` on a log scale (3000 -> 4096, 2500 -> 2048); >= 1.
int64_t token_bucket(int64_t tokens);
std::string dtype_name(at::ScalarType dtype);  // "float32", "float64", ...
store::KernelKey kernel_key(const TTShape& shape, int64_t tokens, at::ScalarType dtype,
                            const Environment& env);

}  // namespace comera::tuner
