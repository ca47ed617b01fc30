#pragma once
// Short human forms of durations and counts, for progress lines and reports.
#include <string>

namespace comera {

// "1h02m", "3m05s", "12s".
std::string format_duration(double seconds);
// "1.49M", "36.0k", "512".
std::string format_count(double n);
// "300", "0.5", "1e-12": a number as a person writes it (six significant digits at most).
std::string number_text(double x);
// x with `digits` digits after the point: "12.06".
std::string fixed_text(double x, int digits);

}  // namespace comera
