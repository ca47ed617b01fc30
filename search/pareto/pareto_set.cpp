#include "search/pareto/pareto_set.h"

#include "core/util/error.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace comera::pareto {

bool has_nan(const Point& p) {
  return std::any_of(p.begin(), p.end(), [](double x) { return std::isnan(x); });
}

bool dominates(const Point& a, const Point& b) {
  if (a.size() != b.size() || has_nan(a) || has_nan(b)) return false;
  bool strictly = false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] > b[i]) return false;
    strictly |= a[i] < b[i];
  }
  return strictly;
}

std::vector<size_t> non_dominated(const std::vector<Point>& points) {
  std::vector<size_t> order;
  for (size_t i = 0; i < points.size(); ++i) {
    if (points[i].size() != points[0].size())
      throw Error("Pareto set: point " + std::to_string(i) + " has " +
                  std::to_string(points[i].size()) + " objectives, point 0 has " +
                  std::to_string(points[0].size()) + " (give every point the same objectives)");
    if (!has_nan(points[i])) order.push_back(i);
  }
  // A dominating point sorts lexicographically before the point it dominates, and domination is
  // transitive, so comparing each point with the front found so far is enough.
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return points[a] < points[b]; });
  std::vector<size_t> front;
  for (size_t i : order)
    if (std::none_of(front.begin(), front.end(),
                     [&](size_t f) { return dominates(points[f], points[i]); }))
      front.push_back(i);
  std::sort(front.begin(), front.end());
  return front;
}

}  // namespace comera::pareto
