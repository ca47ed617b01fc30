#include "search/pareto/hypervolume.h"

#include "core/util/error.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace comera::pareto {

namespace {

// Points here are finite-or-(-inf), strictly below the reference in every objective.
double volume(std::vector<Point> points, const Point& reference, size_t dims) {
  if (points.empty()) return 0;
  if (dims == 1) {
    double best = reference[0];
    for (const auto& p : points) best = std::min(best, p[0]);
    return reference[0] - best;
  }
  const size_t last = dims - 1;
  std::sort(points.begin(), points.end(),
            [&](const Point& a, const Point& b) { return a[last] < b[last]; });
  // Between consecutive levels of the last objective the dominated region's cross-section is
  // the (dims-1)-volume of the points at or below that level.
  double total = 0;
  std::vector<Point> below;
  for (size_t i = 0; i < points.size(); ++i) {
    below.push_back(points[i]);
    const double next = i + 1 < points.size() ? points[i + 1][last] : reference[last];
    if (next > points[i][last]) total += volume(below, reference, last) * (next - points[i][last]);
  }
  return total;
}

}  // namespace

double hypervolume(const std::vector<Point>& points, const Point& reference) {
  std::vector<Point> inside;
  for (const auto& p : points) {
    if (p.size() != reference.size())
      throw Error("hypervolume: a point has " + std::to_string(p.size()) +
                  " objectives but the reference point has " + std::to_string(reference.size()));
    if (has_nan(p)) continue;
    bool better = true;
    for (size_t i = 0; i < p.size(); ++i) better &= p[i] < reference[i];
    if (better) inside.push_back(p);
  }
  // Dominated points add no volume; dropping them keeps the recursion small.
  std::vector<Point> front;
  for (size_t i : non_dominated(inside)) front.push_back(inside[i]);
  return volume(front, reference, reference.size());
}

Point default_reference(const std::vector<Point>& points, double margin) {
  if (points.empty()) throw Error("hypervolume: no points to place a reference point after");
  Point reference(points[0].size());
  for (size_t k = 0; k < reference.size(); ++k) {
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (const auto& p : points)
      if (std::isfinite(p[k])) lo = std::min(lo, p[k]), hi = std::max(hi, p[k]);
    if (hi < lo)
      throw Error("hypervolume: objective " + std::to_string(k) +
                  " has no finite value, so there is no default reference point (give one)");
    const double pad = hi > lo ? hi - lo : std::abs(hi) > 0 ? std::abs(hi) : 1;
    reference[k] = hi + margin * pad;
  }
  return reference;
}

}  // namespace comera::pareto
