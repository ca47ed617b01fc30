#pragma once
// Short human forms of durations and counts, for progress lines and reports.
#include <string>

namespace comera {

// "1h02m", "3m05s", "12s".
std::string format_duration(double seconds);
// "1.49M", "36.0k", "512".
std::string format_count(double n);

}  // namespace comera
