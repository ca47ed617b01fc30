#pragma once
// Unconstrained minimisation by L-BFGS with a backtracking (Armijo) line search: enough for the
// handful of smooth parameters of a Gaussian process, where the objective may be +inf (a
// kernel matrix that is not positive definite) and the search then steps back.
#include <functional>
#include <vector>

namespace comera::propose {

// f(x, gradient) returns the value at x and writes the gradient (same length as x).
using Objective = std::function<double(const std::vector<double>& x, std::vector<double>& gradient)>;

struct MinimiseResult {
  std::vector<double> x;
  double value = 0;
  int iterations = 0;
};

// From `start`, until the gradient's largest entry is below `tolerance`, the value stops
// improving, or `max_iterations`.
MinimiseResult minimise(const Objective& f, std::vector<double> start, int max_iterations = 100,
                        double tolerance = 1e-6);

}  // namespace comera::propose
