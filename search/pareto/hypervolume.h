#pragma once
// Hypervolume of a set of objective vectors (all minimised): the measure of the region they
// dominate inside the box bounded by a reference point. Points with a NaN, or not strictly
// better than the reference in every objective, add nothing.
#include "search/pareto/pareto_set.h"

namespace comera::pareto {

// Exact, by slicing along the last objective (fine for the tens to thousands of trials a
// sweep has, in 2 to 4 objectives).
double hypervolume(const std::vector<Point>& points, const Point& reference);

// A reference point that every finite point improves on: per objective, the worst finite value
// plus `margin` times the range of finite values (plus `margin` times |worst| when the range is 0,
// or plus 1 when that is 0 too). Throws comera::Error when an objective has no finite value.
Point default_reference(const std::vector<Point>& points, double margin = 0.1);

}  // namespace comera::pareto
