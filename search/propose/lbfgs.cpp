#include "search/propose/lbfgs.h"

#include <cmath>
#include <deque>

namespace comera::propose {

namespace {

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

double max_abs(const std::vector<double>& a) {
  double m = 0;
  for (double v : a) m = std::max(m, std::abs(v));
  return m;
}

}  // namespace

MinimiseResult minimise(const Objective& f, std::vector<double> start, int max_iterations,
                        double tolerance) {
  constexpr size_t kMemory = 8;
  const size_t n = start.size();
  MinimiseResult best{std::move(start), 0, 0};
  std::vector<double> g(n), g_next(n), x_next(n), d(n);
  best.value = f(best.x, g);
  if (!std::isfinite(best.value)) return best;
  std::deque<std::vector<double>> s_hist, y_hist;
  for (int iter = 0; iter < max_iterations && max_abs(g) > tolerance; ++iter) {
    best.iterations = iter + 1;
    // Two-loop recursion: d = -H g with H from the last kMemory steps.
    d = g;
    std::vector<double> alpha(s_hist.size());
    for (size_t k = s_hist.size(); k-- > 0;) {
      alpha[k] = dot(s_hist[k], d) / dot(y_hist[k], s_hist[k]);
      for (size_t i = 0; i < n; ++i) d[i] -= alpha[k] * y_hist[k][i];
    }
    const double gamma = s_hist.empty() ? 1 / std::max(1.0, max_abs(g))
                                        : dot(s_hist.back(), y_hist.back()) / dot(y_hist.back(), y_hist.back());
    for (auto& v : d) v *= gamma;
    for (size_t k = 0; k < s_hist.size(); ++k) {
      const double beta = dot(y_hist[k], d) / dot(y_hist[k], s_hist[k]);
      for (size_t i = 0; i < n; ++i) d[i] += s_hist[k][i] * (alpha[k] - beta);
    }
    for (auto& v : d) v = -v;
    double slope = dot(g, d);
    if (!(slope < 0)) {  // not a descent direction: restart from steepest descent
      s_hist.clear(), y_hist.clear();
      for (size_t i = 0; i < n; ++i) d[i] = -g[i] / std::max(1.0, max_abs(g));
      slope = dot(g, d);
    }
    double step = 1, value = 0;
    bool accepted = false;
    for (int tries = 0; tries < 40; ++tries, step *= 0.5) {
      for (size_t i = 0; i < n; ++i) x_next[i] = best.x[i] + step * d[i];
      value = f(x_next, g_next);
      if (std::isfinite(value) && value <= best.value + 1e-4 * step * slope) {
        accepted = true;
        break;
      }
    }
    if (!accepted) break;
    std::vector<double> s(n), y(n);
    for (size_t i = 0; i < n; ++i) s[i] = x_next[i] - best.x[i], y[i] = g_next[i] - g[i];
    // Only curvature-positive pairs keep H positive definite.
    if (dot(s, y) > 1e-12 * dot(y, y)) {
      s_hist.push_back(std::move(s)), y_hist.push_back(std::move(y));
      if (s_hist.size() > kMemory) s_hist.pop_front(), y_hist.pop_front();
    }
    const double improvement = best.value - value;
    best.x = x_next, best.value = value, g = g_next;
    if (improvement < 1e-10 * std::max(1.0, std::abs(value))) break;
  }
  return best;
}

}  // namespace comera::propose
