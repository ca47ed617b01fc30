#include "core/formats/factorize.h"

#include "core/util/error.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <string>

namespace comera {

namespace {

void collect(int64_t n, int d, int64_t max_factor, std::vector<int64_t>& cur,
             std::vector<std::vector<int64_t>>& out) {
  if (d == 1) {
    if (n <= max_factor) {
      cur.push_back(n);
      out.push_back(cur);
      cur.pop_back();
    }
    return;
  }
  for (int64_t f = std::min(n, max_factor); f >= 1; --f) {
    if (n % f) continue;
    cur.push_back(f);
    collect(n / f, d - 1, f, cur, out);
    cur.pop_back();
  }
}

double spread(const std::vector<int64_t>& f) {
  double mean = 0;
  for (int64_t x : f) mean += std::log(double(x));
  mean /= double(f.size());
  double s = 0;
  for (int64_t x : f) s += std::pow(std::log(double(x)) - mean, 2);
  return s;
}

}  // namespace

std::vector<std::vector<int64_t>> balanced_factorizations(int64_t n, int d) {
  if (n < 1 || d < 1)
    throw Error("factorization of " + std::to_string(n) + " into " + std::to_string(d) +
                " modes: need n >= 1 and d >= 1");
  std::vector<std::vector<int64_t>> out;
  std::vector<int64_t> cur;
  collect(n, d, n, cur, out);
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return spread(a) < spread(b); });
  return out;
}

std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> propose_tt_modes(
    int64_t in, int64_t out, int d, int count) {
  auto ins = balanced_factorizations(in, d);
  auto outs = balanced_factorizations(out, d);
  const size_t keep = static_cast<size_t>(std::max(1, count));
  ins.resize(std::min(ins.size(), keep));
  outs.resize(std::min(outs.size(), keep));
  std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> pairs;
  for (const auto& a : ins)
    for (auto b : outs) {
      std::reverse(b.begin(), b.end());
      pairs.emplace_back(a, b);
    }
  std::stable_sort(pairs.begin(), pairs.end(), [](const auto& x, const auto& y) {
    return spread(x.first) + spread(x.second) < spread(y.first) + spread(y.second);
  });
  pairs.resize(std::min(pairs.size(), keep));
  return pairs;
}

std::vector<int64_t> covering_modes(int64_t n, int d) {
  if (n < 1 || d < 1) throw Error("covering modes: need n >= 1 and d >= 1");
  const auto product = [](const std::vector<int64_t>& v) {
    return std::accumulate(v.begin(), v.end(), int64_t{1}, std::multiplies<>());
  };
  auto start = static_cast<int64_t>(std::ceil(std::pow(static_cast<double>(n), 1.0 / d)));
  std::vector<int64_t> modes(static_cast<size_t>(d), start);
  while (product(modes) < n) ++modes[0];  // pow's rounding
  for (auto& m : modes)
    while (m > 1) {
      --m;
      if (product(modes) < n) {
        ++m;
        break;
      }
    }
  std::sort(modes.rbegin(), modes.rend());
  return modes;
}

TTMModes propose_ttm_modes(int64_t rows, int64_t dim, int d) {
  return {covering_modes(rows, d), balanced_factorizations(dim, d).front()};
}

}  // namespace comera
