#pragma once
// The search space of an adaptive sweep: named axes that are real ranges, integer ranges or
// unordered choices, and the unit-cube encoding the samplers model in (log axes in log space, so
// a learning rate's decades are equally wide; integers as reals; choices one-hot).
#include "core/util/random.h"

#include <cstdint>
#include <string>
#include <vector>

namespace comera::propose {

enum class AxisKind { Real, Integer, Choice };

struct SpaceAxis {
  std::string name;
  AxisKind kind = AxisKind::Real;
  double min = 0, max = 0;  // Real and Integer: inclusive bounds
  bool log = false;         // Real and Integer: uniform in log(value)
  int64_t choices = 0;      // Choice: how many
};

using Space = std::vector<SpaceAxis>;

// One value per axis: the real value, the integer value, or the choice's index.
using Values = std::vector<double>;

// Throws comera::Error naming the axis and the fix: an empty or repeated name, min >= max,
// a log axis with min <= 0, integer bounds that are not whole numbers, fewer than 1 choice.
void check_space(const Space& space);

// Throws comera::Error naming `what` ("observation 3") and the axis when `values` does not have
// one value per axis or a value is outside its axis (a non-whole integer, a choice out of range).
void check_values(const Space& space, const Values& values, const std::string& what);

// A Real or Integer axis's value as a position in [0, 1], and back (integers rounded).
double to_unit(const SpaceAxis& axis, double value);
double from_unit(const SpaceAxis& axis, double unit);

// Encoded width: one column per Real or Integer axis, `choices` columns per Choice axis.
size_t encoded_width(const Space& space);
std::vector<double> encode(const Space& space, const Values& values);
// Any point of the unit cube: positions clamped and rounded, a choice the largest of its columns.
Values decode(const Space& space, const std::vector<double>& encoded);

// Uniform over the space: log-uniform on log axes, every integer of the range and every choice
// equally likely.
Values random_values(const Space& space, Rng& rng);

// Row `index` of a Latin hypercube of `count` rows (every axis is cut into `count` equal strata
// of its uniform draw and each row takes a different one, so a choice axis spreads the rows
// evenly over its choices), the same for the same space, count and seed. The initial design: it covers the space
// more evenly than independent draws for the handful of points it has.
Values latin_hypercube_row(const Space& space, int64_t count, int64_t index, uint64_t seed);

}  // namespace comera::propose
