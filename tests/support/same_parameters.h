#pragma once
// Two models hold the same parameters: the same names, shapes and values, bit for bit.
#include "tests/support/catch.h"

#include <ATen/ATen.h>
#include <torch/nn/module.h>

namespace comera::testing {

inline void check_same_parameters(torch::nn::Module& a, torch::nn::Module& b) {
  const auto pa = a.named_parameters(), pb = b.named_parameters();
  REQUIRE(pa.size() == pb.size());
  for (const auto& item : pa) {
    INFO(item.key());
    REQUIRE(item.value().sizes() == pb[item.key()].sizes());
    CHECK(at::equal(item.value(), pb[item.key()]));
  }
}

}  // namespace comera::testing
