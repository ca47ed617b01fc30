#include "core/contract/named_paths.h"

#include <vector>

namespace comera::contract {

namespace {

// Steps merging cores first..last (1-based, inclusive) one at a time, from the left or the
// right end; appends them to `steps` and returns the merged set.
Mask merge_cores(int first, int last, bool from_left, std::vector<Step>& steps) {
  Mask acc = bit(from_left ? first : last);
  for (int i = 1; i <= last - first; ++i) {
    const Mask next = bit(from_left ? first + i : last - i);
    steps.push_back({acc, next});
    acc |= next;
  }
  return acc;
}

}  // namespace

Order merged_order(const TTNetwork& tt) {
  std::vector<Step> steps;
  const Mask l = merge_cores(1, tt.d(), true, steps);
  const Mask r = merge_cores(tt.d() + 1, 2 * tt.d(), false, steps);
  const Mask x = bit(tt.x());
  steps.push_back({x, l});
  steps.push_back({x | l, r});
  return Order(tt.forward_leaves(), steps);
}

Order core_by_core_order(const TTNetwork& tt) {
  std::vector<Step> steps;
  Mask acc = bit(tt.x());
  for (int k = 1; k <= 2 * tt.d(); ++k) {
    steps.push_back({acc, bit(k)});
    acc |= bit(k);
  }
  return Order(tt.forward_leaves(), steps);
}

Order reconstruct_order(const TTNetwork& tt) {
  std::vector<Step> steps;
  const Mask l = merge_cores(1, tt.d(), true, steps);
  const Mask r = merge_cores(tt.d() + 1, 2 * tt.d(), false, steps);
  steps.push_back({l, r});
  steps.push_back({bit(tt.x()), l | r});
  return Order(tt.forward_leaves(), steps);
}

}  // namespace comera::contract
