#pragma once
// A baseline method (core/training/method.h) as a request to a model kind: which method, and
// the settings of the layers it puts in (LTE's heads, the low-rank factor's rank).
#include <cstdint>
#include <string>

namespace comera {

struct MethodRequest {
  std::string method;  // "dense", "tt", "galore", "lte", "lowrank"
  int64_t lte_rank = 32, lte_heads = 4, merge_steps = 1;
  double lte_alpha = 32;
  int64_t lowrank_rank = 32;
};

}  // namespace comera
