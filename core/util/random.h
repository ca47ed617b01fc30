#pragma once
// Seeded randomness that gives the same numbers with every standard library: std::mt19937_64's
// output is fixed by the standard, but std::shuffle and the std:: distributions are not.
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace comera {

class Rng {
 public:
  explicit Rng(uint64_t seed) : engine_(seed) {}
  // Uniform in [0, n), n >= 1 (rejection sampling, no modulo bias).
  uint64_t below(uint64_t n);
  // Fisher-Yates shuffle.
  template <class T>
  void shuffle(std::vector<T>& items) {
    for (size_t i = items.size(); i > 1; --i) std::swap(items[i - 1], items[below(i)]);
  }
  // A random order of 0..n-1.
  std::vector<int64_t> permutation(int64_t n);
  // Uniform in [0, 1), 53 random bits.
  double uniform();
  // Standard normal (Box-Muller).
  double normal();
  // In [0, n) with weight about (k+1)^-s: the continuous power law on [1, n+1) inverted and
  // floored (no table, so any n).
  int64_t zipf(int64_t n, double s);

 private:
  std::mt19937_64 engine_;
};

// Throws comera::Error naming `flag` unless `s` is a Zipf exponent zipf() draws from: finite
// and >= 0 (a negative one would favour the rarest ids, NaN gives garbage ids).
void require_zipf_exponent(double s, const std::string& flag);

}  // namespace comera
