#pragma once
// A Gaussian process regression on the unit cube: Matern 5/2 kernel with one length scale per
// input (ARD), a signal variance and a noise variance, zero prior mean on standardised outputs.
// Plain double-precision C++ rather than LibTorch: the matrices are tens of rows, where each
// LibTorch call costs more than the arithmetic, and the result is the same on every machine.
#include <cstdint>
#include <vector>

namespace comera::propose {

struct Kernel {
  std::vector<double> length_scales;  // one per input column
  double signal_variance = 1;
  double noise_variance = 1e-6;
};

// The kernel's signal part between two inputs (without noise).
double matern52(const std::vector<double>& a, const std::vector<double>& b, const Kernel& kernel);

// log p(y | x) of a zero-mean GP; -inf when K + noise I is not positive definite. With
// `gradient`, also its derivatives with respect to the log of each parameter: the length scales
// in order, then the signal variance, then the noise variance.
double log_marginal_likelihood(const std::vector<std::vector<double>>& x, const std::vector<double>& y,
                               const Kernel& kernel, std::vector<double>* gradient = nullptr);

class GaussianProcess {
 public:
  struct Prediction {
    double mean = 0;
    double variance = 0;  // of the latent function (noise left out)
  };

  // The posterior with a fixed kernel, y as given (zero prior mean). Throws comera::Error when
  // K + noise I is not positive definite.
  GaussianProcess(std::vector<std::vector<double>> x, std::vector<double> y, Kernel kernel);

  // y standardised to mean 0 and variance 1, and the kernel that maximises the log marginal
  // likelihood plus log-normal priors on its parameters (which keep 5 to 60 points from
  // collapsing a length scale or the noise), from a default start and `restarts` draws.
  static GaussianProcess fit(const std::vector<std::vector<double>>& x, const std::vector<double>& y,
                             uint64_t seed, int restarts = 2);

  // Mean and variance at `at`, in y's units.
  Prediction predict(const std::vector<double>& at) const;

  // The same kernel and scaling, with one more observation (a pending point at its predicted
  // mean, for the kriging believer).
  GaussianProcess with(const std::vector<double>& x, double y) const;

  const Kernel& kernel() const { return kernel_; }

 private:
  GaussianProcess(std::vector<std::vector<double>> x, std::vector<double> y, Kernel kernel,
                  double offset, double scale);

  std::vector<std::vector<double>> x_;
  std::vector<double> y_;        // standardised
  Kernel kernel_;
  double offset_ = 0, scale_ = 1;  // y = offset + scale * standardised
  std::vector<double> chol_;     // lower Cholesky factor of K + noise I, row-major
  std::vector<double> alpha_;    // (K + noise I)^-1 y
};

}  // namespace comera::propose
