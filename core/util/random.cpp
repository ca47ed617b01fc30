#include "core/util/random.h"

#include "core/util/error.h"
#include "core/util/format.h"

#include <algorithm>
#include <cmath>
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

double Rng::uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }

double Rng::normal() {
  const double u = 1.0 - uniform();  // (0, 1]: log stays finite
  return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * uniform());
}

void require_zipf_exponent(double s, const std::string& flag) {
  if (!(std::isfinite(s) && s >= 0))
    throw Error(flag + " " + number_text(s) + ": a Zipf exponent is a number >= 0 (0: uniform ids; 1.05 is "
                "about Criteo's)");
}

int64_t Rng::zipf(int64_t n, double s) {
  if (n < 1) throw Error("Rng::zipf: the range is empty");
  const double u = uniform();
  double x;
  if (std::abs(s - 1) < 1e-9) {
    x = std::exp(u * std::log(static_cast<double>(n) + 1));
  } else {
    const double top = std::pow(static_cast<double>(n) + 1, 1 - s);
    x = std::pow(1 + u * (top - 1), 1 / (1 - s));
  }
  return std::clamp<int64_t>(static_cast<int64_t>(x) - 1, 0, n - 1);
}

}  // namespace comera
