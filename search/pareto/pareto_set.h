#pragma once
// Pareto dominance over objective vectors, every objective minimised (negate the ones to
// maximise first). A vector with a NaN entry (a diverged trial, a missing value) cannot be
// compared: it is never on the front and dominates nothing. Equal vectors do not dominate each
// other, so ties are all kept.
#include <cstddef>
#include <vector>

namespace comera::pareto {

using Point = std::vector<double>;

bool has_nan(const Point& p);

// a <= b everywhere and a < b somewhere; false when either has a NaN.
bool dominates(const Point& a, const Point& b);

// Indices of the non-dominated points, in increasing index order. All points must have the same
// length (throws comera::Error otherwise).
std::vector<size_t> non_dominated(const std::vector<Point>& points);

}  // namespace comera::pareto
