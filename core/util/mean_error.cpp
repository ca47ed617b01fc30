#include "core/util/mean_error.h"

#include <cmath>

namespace comera {

MeanError mean_error(const std::vector<double>& values) {
  MeanError m;
  m.count = values.size();
  if (values.empty()) return m;
  const auto n = static_cast<double>(values.size());
  double squares = 0;
  m.mean = 0;
  for (double v : values) m.mean += v / n;
  for (double v : values) squares += (v - m.mean) * (v - m.mean);
  m.standard_error = values.size() < 2 ? NAN : std::sqrt(squares / (n - 1) / n);
  return m;
}

}  // namespace comera
