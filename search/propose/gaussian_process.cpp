#include "search/propose/gaussian_process.h"

#include "core/util/error.h"
#include "core/util/random.h"
#include "search/propose/lbfgs.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace comera::propose {

namespace {

constexpr double kSqrt5 = 2.23606797749979;
constexpr double kLog2Pi = 1.8378770664093453;

// Bounds and log-normal priors of the log parameters, for inputs in [0, 1] and standardised
// outputs: length scales around half the cube (a quarter to twice it within one sd), signal
// variance around 1, noise small but free to grow for noisy objectives.
struct LogPrior {
  double mean, sd, lo, hi;
};
const LogPrior kLengthPrior{std::log(0.5), 1.0, std::log(0.01), std::log(20.0)};
const LogPrior kSignalPrior{0.0, 1.0, std::log(0.05), std::log(20.0)};
const LogPrior kNoisePrior{std::log(1e-3), 2.0, std::log(1e-6), std::log(1.0)};

// In place: the lower Cholesky factor of the n x n row-major `a`; false if not positive definite.
bool cholesky(std::vector<double>& a, size_t n) {
  for (size_t j = 0; j < n; ++j) {
    double d = a[j * n + j];
    for (size_t k = 0; k < j; ++k) d -= a[j * n + k] * a[j * n + k];
    if (!(d > 0)) return false;
    d = std::sqrt(d);
    a[j * n + j] = d;
    for (size_t i = j + 1; i < n; ++i) {
      double s = a[i * n + j];
      for (size_t k = 0; k < j; ++k) s -= a[i * n + k] * a[j * n + k];
      a[i * n + j] = s / d;
    }
    for (size_t i = 0; i < j; ++i) a[i * n + j] = 0;
  }
  return true;
}

// b := L^-1 b.
void forward_solve(const std::vector<double>& l, size_t n, std::vector<double>& b) {
  for (size_t i = 0; i < n; ++i) {
    double s = b[i];
    for (size_t k = 0; k < i; ++k) s -= l[i * n + k] * b[k];
    b[i] = s / l[i * n + i];
  }
}

// b := L^-T b.
void backward_solve(const std::vector<double>& l, size_t n, std::vector<double>& b) {
  for (size_t i = n; i-- > 0;) {
    double s = b[i];
    for (size_t k = i + 1; k < n; ++k) s -= l[k * n + i] * b[k];
    b[i] = s / l[i * n + i];
  }
}

double scaled_distance(const std::vector<double>& a, const std::vector<double>& b, const Kernel& kernel) {
  double r2 = 0;
  for (size_t j = 0; j < a.size(); ++j) {
    const double d = (a[j] - b[j]) / kernel.length_scales[j];
    r2 += d * d;
  }
  return std::sqrt(r2);
}

std::vector<double> kernel_matrix(const std::vector<std::vector<double>>& x, const Kernel& kernel) {
  const size_t n = x.size();
  std::vector<double> k(n * n);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j <= i; ++j)
      k[i * n + j] = k[j * n + i] = matern52(x[i], x[j], kernel) + (i == j ? kernel.noise_variance : 0);
  return k;
}

double sigmoid(double u) { return 1 / (1 + std::exp(-u)); }

// The optimiser's unbounded u and a log parameter inside (lo, hi): p = lo + (hi - lo) sigmoid(u).
double to_log(const LogPrior& p, double u) { return p.lo + (p.hi - p.lo) * sigmoid(u); }
double from_log(const LogPrior& p, double log_value) {
  const double t = std::clamp((log_value - p.lo) / (p.hi - p.lo), 0.01, 0.99);
  return std::log(t / (1 - t));
}

}  // namespace

double matern52(const std::vector<double>& a, const std::vector<double>& b, const Kernel& kernel) {
  const double r = scaled_distance(a, b, kernel);
  return kernel.signal_variance * (1 + kSqrt5 * r + 5.0 / 3.0 * r * r) * std::exp(-kSqrt5 * r);
}

double log_marginal_likelihood(const std::vector<std::vector<double>>& x, const std::vector<double>& y,
                               const Kernel& kernel, std::vector<double>* gradient) {
  const size_t n = x.size(), dims = kernel.length_scales.size();
  auto l = kernel_matrix(x, kernel);
  if (!cholesky(l, n)) return -std::numeric_limits<double>::infinity();
  std::vector<double> alpha = y;
  forward_solve(l, n, alpha);
  double value = -0.5 * static_cast<double>(n) * kLog2Pi;
  for (size_t i = 0; i < n; ++i) value -= 0.5 * alpha[i] * alpha[i] + std::log(l[i * n + i]);
  if (!gradient) return value;
  backward_solve(l, n, alpha);
  // K^-1 column by column; d/dp log p = 0.5 tr((alpha alpha^T - K^-1) dK/dp).
  std::vector<double> inverse(n * n), column(n);
  for (size_t c = 0; c < n; ++c) {
    std::fill(column.begin(), column.end(), 0.0);
    column[c] = 1;
    forward_solve(l, n, column);
    backward_solve(l, n, column);
    for (size_t i = 0; i < n; ++i) inverse[i * n + c] = column[i];
  }
  gradient->assign(dims + 2, 0.0);
  auto& g = *gradient;
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n; ++j) {
      const double w = 0.5 * (alpha[i] * alpha[j] - inverse[i * n + j]);
      const double r = scaled_distance(x[i], x[j], kernel);
      const double e = std::exp(-kSqrt5 * r);
      g[dims] += w * kernel.signal_variance * (1 + kSqrt5 * r + 5.0 / 3.0 * r * r) * e;
      if (i == j) {
        g[dims + 1] += w * kernel.noise_variance;
        continue;
      }
      // dk/dlog(l_d) = 5/3 s (1 + sqrt5 r) exp(-sqrt5 r) (x_d - x'_d)^2 / l_d^2.
      const double common = w * 5.0 / 3.0 * kernel.signal_variance * (1 + kSqrt5 * r) * e;
      for (size_t d = 0; d < dims; ++d) {
        const double t = (x[i][d] - x[j][d]) / kernel.length_scales[d];
        g[d] += common * t * t;
      }
    }
  return value;
}

GaussianProcess::GaussianProcess(std::vector<std::vector<double>> x, std::vector<double> y, Kernel kernel)
    : GaussianProcess(std::move(x), std::move(y), std::move(kernel), 0, 1) {}

GaussianProcess::GaussianProcess(std::vector<std::vector<double>> x, std::vector<double> y, Kernel kernel,
                                 double offset, double scale)
    : x_(std::move(x)), y_(std::move(y)), kernel_(std::move(kernel)), offset_(offset), scale_(scale) {
  const size_t n = x_.size();
  chol_ = kernel_matrix(x_, kernel_);
  if (!cholesky(chol_, n))
    throw Error("Gaussian process: the kernel matrix of " + std::to_string(n) +
                " points is not positive definite (raise the noise variance)");
  alpha_ = y_;
  forward_solve(chol_, n, alpha_);
  backward_solve(chol_, n, alpha_);
}

GaussianProcess GaussianProcess::fit(const std::vector<std::vector<double>>& x, const std::vector<double>& y,
                                     uint64_t seed, int restarts) {
  if (x.empty()) throw Error("Gaussian process: no observations to fit (give at least one)");
  const size_t n = y.size(), dims = x[0].size();
  double mean = 0, var = 0;
  for (double v : y) mean += v / static_cast<double>(n);
  for (double v : y) var += (v - mean) * (v - mean) / static_cast<double>(n);
  const double scale = var > 0 ? std::sqrt(var) : 1;
  std::vector<double> z(n);
  for (size_t i = 0; i < n; ++i) z[i] = (y[i] - mean) / scale;

  auto prior_of = [&](size_t k) -> const LogPrior& {
    return k < dims ? kLengthPrior : k == dims ? kSignalPrior : kNoisePrior;
  };
  auto kernel_at = [&](const std::vector<double>& u) {
    Kernel k;
    for (size_t d = 0; d < dims; ++d) k.length_scales.push_back(std::exp(to_log(kLengthPrior, u[d])));
    k.signal_variance = std::exp(to_log(kSignalPrior, u[dims]));
    k.noise_variance = std::exp(to_log(kNoisePrior, u[dims + 1]));
    return k;
  };
  // Minimised: -(log marginal likelihood + log priors), over the unbounded u.
  const Objective objective = [&](const std::vector<double>& u, std::vector<double>& grad) {
    std::vector<double> g;
    const double lml = log_marginal_likelihood(x, z, kernel_at(u), &g);
    if (!std::isfinite(lml)) return std::numeric_limits<double>::infinity();
    double value = -lml;
    for (size_t k = 0; k < dims + 2; ++k) {
      const auto& p = prior_of(k);
      const double s = sigmoid(u[k]), log_p = to_log(p, u[k]);
      const double t = (log_p - p.mean) / p.sd;
      value += 0.5 * t * t;
      grad[k] = -(g[k] - t / p.sd) * (p.hi - p.lo) * s * (1 - s);
    }
    return value;
  };

  Rng rng(seed);
  MinimiseResult best;
  best.value = std::numeric_limits<double>::infinity();
  for (int start = 0; start <= restarts; ++start) {
    std::vector<double> u(dims + 2);
    for (size_t k = 0; k < u.size(); ++k) {
      const auto& p = prior_of(k);
      u[k] = from_log(p, start == 0 ? p.mean : p.mean + p.sd * rng.normal());
    }
    auto result = minimise(objective, u, 200, 1e-5);
    if (result.value < best.value) best = std::move(result);
  }
  if (!std::isfinite(best.value))
    throw Error("Gaussian process: no kernel fits the " + std::to_string(n) +
                " observations (check them for repeated inputs with wildly different outputs)");
  return GaussianProcess(x, std::move(z), kernel_at(best.x), mean, scale);
}

GaussianProcess::Prediction GaussianProcess::predict(const std::vector<double>& at) const {
  const size_t n = x_.size();
  std::vector<double> k(n);
  double mean = 0;
  for (size_t i = 0; i < n; ++i) {
    k[i] = matern52(at, x_[i], kernel_);
    mean += k[i] * alpha_[i];
  }
  forward_solve(chol_, n, k);
  double variance = kernel_.signal_variance;
  for (double v : k) variance -= v * v;
  return {offset_ + scale_ * mean, scale_ * scale_ * std::max(variance, 0.0)};
}

GaussianProcess GaussianProcess::with(const std::vector<double>& x, double y) const {
  auto xs = x_;
  auto ys = y_;
  xs.push_back(x);
  ys.push_back((y - offset_) / scale_);
  return GaussianProcess(std::move(xs), std::move(ys), kernel_, offset_, scale_);
}

}  // namespace comera::propose
