#pragma once
// The mean of repeated measurements (seeds, runs) and its standard error: the sample standard
// deviation over sqrt(n), which is NaN below two values (no spread measured).
#include <cmath>
#include <cstddef>
#include <vector>

namespace comera {

struct MeanError {
  double mean = NAN;  // NaN: no values
  double standard_error = NAN;
  size_t count = 0;
};

MeanError mean_error(const std::vector<double>& values);

}  // namespace comera
