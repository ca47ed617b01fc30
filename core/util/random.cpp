#include "core/util/random.h"

#include "core/util/error.h"

#include <numeric>

namespace comera {

uint64_t Rng::below(uint64_t n) {
  if (n == 0) throw Error("Rng::below(0): the range is empty");
  // Drop the lowest 2^64 mod n draws so every residue is equally likely.
  const uint64_t threshold = (0 - n) % n;
  uint64_t x;
  do x = engine_();
  while (x < threshold);
  return x % n;
}

std::vector<int64_t> Rng::permutation(int64_t n) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  shuffle(order);
  return order;
}

}  // namespace comera
