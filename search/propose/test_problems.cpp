#include "search/propose/test_problems.h"

#include "core/util/comma_list.h"
#include "core/util/error.h"

#include <algorithm>
#include <cmath>

namespace comera::propose {

namespace {

// h(f1, g): ZDT3's sine takes f1 itself, the rest f1 / g.
double h(const std::string& name, double f1, double g) {
  const double t = f1 / g;
  if (name == "zdt1") return 1 - std::sqrt(t);
  if (name == "zdt2") return 1 - t * t;
  return 1 - std::sqrt(t) - t * std::sin(10 * M_PI * f1);
}

// The area the curve f2 = h(f1), f1 in [0, 1], dominates inside the reference box: at each f1
// the region above the lowest h reached at or before it (ZDT3's front is not monotone), by
// the midpoint rule on a fine grid (error far below the differences the samplers show).
double front_area(const std::string& name, const pareto::Point& reference) {
  constexpr int kSteps = 200000;
  const double width = reference[0] / kSteps;
  double lowest = h(name, 0, 1), area = 0;
  for (int i = 0; i < kSteps; ++i) {
    const double f1 = (i + 0.5) * width;
    if (f1 <= 1) lowest = std::min(lowest, h(name, f1, 1));
    area += std::max(0.0, reference[1] - lowest) * width;
  }
  return area;
}

}  // namespace

std::vector<std::string> test_problem_names() { return {"zdt1", "zdt2", "zdt3"}; }

TestProblem test_problem(const std::string& name, int64_t variables) {
  const auto names = test_problem_names();
  if (std::find(names.begin(), names.end(), name) == names.end())
    throw Error("test problem '" + name + "' is unknown (use one of " + join_names(names) + ")");
  if (variables < 2)
    throw Error("test problem " + name + ": " + std::to_string(variables) + " variables (give at least 2)");
  TestProblem p;
  p.name = name;
  for (int64_t i = 0; i < variables; ++i) p.space.push_back({"x" + std::to_string(i + 1), AxisKind::Real, 0, 1});
  p.evaluate = [name](const Values& x) {
    double sum = 0;
    for (size_t i = 1; i < x.size(); ++i) sum += x[i];
    const double g = 1 + 9 * sum / static_cast<double>(x.size() - 1);
    return pareto::Point{x[0], g * h(name, x[0], g)};
  };
  p.near.reference = {1.1, 1.1};
  p.near.front_hypervolume = front_area(name, p.near.reference);
  p.whole.reference = {1.1, 11};
  p.whole.front_hypervolume = front_area(name, p.whole.reference);
  return p;
}

}  // namespace comera::propose
