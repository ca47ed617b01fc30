#pragma once
// Expected hypervolume improvement (EHVI) of one new point whose objectives are independent
// Gaussians, over a front (all objectives minimised), exactly and in any number of objectives.
// The region inside the reference box that the front does not dominate is cut into boxes
// [lower, upper) whose last lower bound is -inf (in two objectives: one vertical strip per gap
// between neighbouring front points, Emmerich et al. 2016 / Couckuyt et al. 2014). The
// improvement of y is the total volume of [y, upper) over the boxes, and for independent
// objectives each box's expected volume is a product of one-dimensional terms
// E[(u - max(y_j, l_j))+] = psi_j(u) - psi_j(l), psi(a) = E[(a - y_j)+].
// The box count is (front size + 1)^(objectives - 1): instant in 2 and 3 objectives.
#include "search/pareto/pareto_set.h"

#include <cstddef>
#include <vector>

namespace comera::propose {

class HypervolumeImprovement {
 public:
  // Points with a NaN or not strictly inside the reference box add nothing and are ignored.
  HypervolumeImprovement(const std::vector<pareto::Point>& front, pareto::Point reference);

  // E[HV(front + y) - HV(front)] for y_j ~ N(mean_j, sd_j^2) independent (sd 0: y = mean).
  double expected(const pareto::Point& mean, const pareto::Point& sd) const;

  // The front points (indices into the front given) that bound the box that gains most in
  // expectation: in two objectives the neighbours whose gap the point fills, one at either end
  // of the front, none when the front is empty.
  std::vector<size_t> best_box_bounds(const pareto::Point& mean, const pareto::Point& sd) const;

 private:
  struct Box {
    std::vector<size_t> lower, upper;  // per objective, indices into grid_[objective]
    std::vector<size_t> bounds;        // front points giving its corners
  };
  // psi_j at every grid value of objective j.
  std::vector<std::vector<double>> psi(const pareto::Point& mean, const pareto::Point& sd) const;
  double box_gain(const Box& box, const std::vector<std::vector<double>>& psi) const;

  pareto::Point reference_;
  std::vector<std::vector<double>> grid_;  // per objective: -inf, sorted front values, reference
  std::vector<Box> boxes_;
};

}  // namespace comera::propose
