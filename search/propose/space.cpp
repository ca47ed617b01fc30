#include "search/propose/space.h"

#include "core/util/error.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace comera::propose {

namespace {

std::string number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}

bool whole(double x) { return std::isfinite(x) && x == std::round(x); }

// The axis's value at `u` uniform in [0, 1): uniform (or log-uniform) over the range, with every
// integer owning an equal share (in log space for log axes) rather than half shares at the ends.
double value_at(const SpaceAxis& axis, double u) {
  if (axis.kind == AxisKind::Choice)
    return std::min<double>(std::floor(u * static_cast<double>(axis.choices)), axis.choices - 1);
  const double pad = axis.kind == AxisKind::Integer ? 0.5 : 0;
  const double lo = axis.min - pad, hi = axis.max + pad;
  double v = axis.log ? std::exp(std::log(lo) + u * (std::log(hi) - std::log(lo))) : lo + u * (hi - lo);
  if (axis.kind == AxisKind::Integer) v = std::round(v);
  return std::clamp(v, axis.min, axis.max);
}

}  // namespace

void check_space(const Space& space) {
  if (space.empty()) throw Error("search space: no axes (give at least one axis to search)");
  std::set<std::string> names;
  for (size_t i = 0; i < space.size(); ++i) {
    const auto& a = space[i];
    const std::string where = "search space axis " + std::to_string(i) +
                              (a.name.empty() ? std::string() : " '" + a.name + "'");
    if (a.name.empty()) throw Error(where + ": the name is empty (give every axis a name)");
    if (!names.insert(a.name).second)
      throw Error(where + ": the name is used by an earlier axis (give every axis its own name)");
    if (a.kind == AxisKind::Choice) {
      if (a.choices < 1)
        throw Error(where + ": " + std::to_string(a.choices) + " choices (a choice axis needs at least 1)");
      continue;
    }
    if (!std::isfinite(a.min) || !std::isfinite(a.max) || a.min >= a.max)
      throw Error(where + ": min " + number(a.min) + " is not below max " + number(a.max) +
                  " (give finite bounds with min < max, or make it a choice axis)");
    if (a.log && a.min <= 0)
      throw Error(where + ": a log axis needs min > 0, got " + number(a.min) +
                  " (raise min, or drop log)");
    if (a.kind == AxisKind::Integer && (!whole(a.min) || !whole(a.max)))
      throw Error(where + ": integer bounds " + number(a.min) + " and " + number(a.max) +
                  " are not whole numbers (round them, or make it a real axis)");
  }
}

void check_values(const Space& space, const Values& values, const std::string& what) {
  if (values.size() != space.size())
    throw Error(what + ": " + std::to_string(values.size()) + " values for " +
                std::to_string(space.size()) + " axes (give one value per axis, in the space's order)");
  for (size_t i = 0; i < space.size(); ++i) {
    const auto& a = space[i];
    const double v = values[i];
    const std::string where = what + ", axis '" + a.name + "': value " + number(v);
    if (a.kind == AxisKind::Choice) {
      if (!whole(v) || v < 0 || v >= static_cast<double>(a.choices))
        throw Error(where + " is not a choice index in 0.." + std::to_string(a.choices - 1) +
                    " (record the index of the choice taken)");
      continue;
    }
    // A relative margin: values written out as text and read back differ in the last digits.
    const double slack = 1e-9 * (std::abs(a.max) + std::abs(a.min));
    if (!(v >= a.min - slack && v <= a.max + slack))
      throw Error(where + " is outside [" + number(a.min) + ", " + number(a.max) +
                  "] (widen the axis, or leave this point out)");
    if (a.kind == AxisKind::Integer && !whole(v))
      throw Error(where + " is not a whole number (record the integer the trial used)");
  }
}

double to_unit(const SpaceAxis& axis, double value) {
  if (axis.log) return (std::log(value) - std::log(axis.min)) / (std::log(axis.max) - std::log(axis.min));
  return (value - axis.min) / (axis.max - axis.min);
}

double from_unit(const SpaceAxis& axis, double unit) {
  const double u = std::clamp(unit, 0.0, 1.0);
  double v = axis.log ? std::exp(std::log(axis.min) + u * (std::log(axis.max) - std::log(axis.min)))
                      : axis.min + u * (axis.max - axis.min);
  if (axis.kind == AxisKind::Integer) v = std::round(v);
  return std::clamp(v, axis.min, axis.max);
}

size_t encoded_width(const Space& space) {
  size_t width = 0;
  for (const auto& a : space) width += a.kind == AxisKind::Choice ? static_cast<size_t>(a.choices) : 1;
  return width;
}

std::vector<double> encode(const Space& space, const Values& values) {
  std::vector<double> out;
  out.reserve(encoded_width(space));
  for (size_t i = 0; i < space.size(); ++i) {
    if (space[i].kind != AxisKind::Choice) {
      out.push_back(to_unit(space[i], values[i]));
      continue;
    }
    for (int64_t c = 0; c < space[i].choices; ++c) out.push_back(c == static_cast<int64_t>(values[i]) ? 1 : 0);
  }
  return out;
}

Values decode(const Space& space, const std::vector<double>& encoded) {
  Values out;
  out.reserve(space.size());
  size_t at = 0;
  for (const auto& a : space) {
    if (a.kind != AxisKind::Choice) {
      out.push_back(from_unit(a, encoded[at++]));
      continue;
    }
    const auto first = encoded.begin() + static_cast<std::ptrdiff_t>(at);
    out.push_back(static_cast<double>(std::max_element(first, first + a.choices) - first));
    at += static_cast<size_t>(a.choices);
  }
  return out;
}

Values random_values(const Space& space, Rng& rng) {
  Values out;
  out.reserve(space.size());
  for (const auto& a : space) out.push_back(value_at(a, rng.uniform()));
  return out;
}

Values latin_hypercube_row(const Space& space, int64_t count, int64_t index, uint64_t seed) {
  if (count < 1 || index < 0 || index >= count)
    throw Error("Latin hypercube: row " + std::to_string(index) + " of " + std::to_string(count) +
                " (ask for a row in 0..count-1)");
  Rng rng(seed);
  Values out;
  out.reserve(space.size());
  // Every axis draws its whole column, so row `index` is the same whichever row is asked for.
  for (const auto& a : space) {
    const auto strata = rng.permutation(count);
    std::vector<double> jitter(static_cast<size_t>(count));
    for (auto& j : jitter) j = rng.uniform();
    const auto row = static_cast<size_t>(index);
    out.push_back(value_at(a, (static_cast<double>(strata[row]) + jitter[row]) / static_cast<double>(count)));
  }
  return out;
}

}  // namespace comera::propose
