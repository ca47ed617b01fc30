#pragma once
// Problems with a known Pareto front for judging the samplers: ZDT1, ZDT2 and ZDT3 (Zitzler, Deb
// and Thiele 2000), two objectives to minimise over n variables in [0, 1]:
//   f1 = x1, g = 1 + 9 / (n - 1) * sum_{i >= 2} x_i, f2 = g * h with t = f1 / g and
//   h = 1 - sqrt(t) (ZDT1, convex front), 1 - t^2 (ZDT2, concave),
//   1 - sqrt(t) - t sin(10 pi f1) (ZDT3, five disconnected pieces).
// The true front is g = 1: f2 = h(f1), f1 in [0, 1].
#include "search/pareto/pareto_set.h"
#include "search/propose/space.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace comera::propose {

// A reference point and the true front's hypervolume inside it.
struct ReferenceBox {
  pareto::Point reference;
  double front_hypervolume = 0;
};

struct TestProblem {
  std::string name;
  Space space;
  std::function<pareto::Point(const Values&)> evaluate;
  // (1.1, 1.1): just past the true front's worst f1 and f2 (1 each), so only points near the
  // front count: how close a sampler gets.
  ReferenceBox near;
  // (1.1, 11): past every point of the space (f1 <= 1, f2 <= g <= 10), so every trial counts:
  // progress from anywhere, where `near` is still 0 (random sampling, early trials).
  ReferenceBox whole;
};

std::vector<std::string> test_problem_names();  // "zdt1", "zdt2", "zdt3"

// Throws comera::Error for another name or fewer than 2 variables.
TestProblem test_problem(const std::string& name, int64_t variables = 4);

}  // namespace comera::propose
