#include "core/util/auc.h"

#include "core/util/error.h"

#include <ATen/ATen.h>

#include <limits>

namespace comera {

double exact_auc(const at::Tensor& scores, const at::Tensor& targets) {
  if (scores.numel() != targets.numel())
    throw Error("AUC: " + std::to_string(scores.numel()) + " scores but " +
                std::to_string(targets.numel()) + " targets");
  const auto s = scores.reshape({-1}).to(at::kCPU, at::kDouble);
  const auto sorted = at::sort(s);
  const auto order = std::get<1>(sorted);
  const auto y = (targets.reshape({-1}).to(at::kCPU, at::kDouble) > 0.5).index_select(0, order).contiguous();
  const auto v = std::get<0>(sorted).contiguous();
  const double* value = v.data_ptr<double>();
  const bool* positive = y.data_ptr<bool>();
  const int64_t n = v.numel();
  double positives = 0, rank_sum = 0;
  for (int64_t i = 0; i < n;) {
    int64_t j = i;
    double group_positives = 0;
    for (; j < n && value[j] == value[i]; ++j) group_positives += positive[j];
    // Ranks i+1..j share their mean.
    rank_sum += group_positives * (static_cast<double>(i + 1 + j) / 2);
    positives += group_positives;
    i = j;
  }
  const double negatives = static_cast<double>(n) - positives;
  if (positives == 0 || negatives == 0) return std::numeric_limits<double>::quiet_NaN();
  return (rank_sum - positives * (positives + 1) / 2) / (positives * negatives);
}

}  // namespace comera
