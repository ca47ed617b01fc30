#include "search/store/readable_cell.h"

#include <cmath>
#include <cstdio>

namespace comera::store {

namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::string grouped(double x) {
  char digits[32];
  std::snprintf(digits, sizeof digits, "%.0f", std::fabs(x));
  std::string text = digits, out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (i > 0 && (text.size() - i) % 3 == 0) out += ',';
    out += text[i];
  }
  return (x < 0 ? "-" : "") + out;
}

}  // namespace

std::string readable_cell(const std::string& column, const nlohmann::json& cell) {
  if (cell.is_null()) return "";
  if (cell.is_string()) return cell.get<std::string>();
  if (!cell.is_number()) return cell.dump();
  const double x = cell.get<double>();
  if (std::isnan(x)) return "";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char text[32];
  if (ends_with(column, "accuracy"))
    std::snprintf(text, sizeof text, "%.2f%%", 100 * x);
  else if (column == "size" || ends_with(column, "_size") || column == "size_target")
    return grouped(x);
  else if (column == "compression")
    std::snprintf(text, sizeof text, "%.1fx", x);
  else if (cell.is_number_integer())
    return cell.dump();
  else
    std::snprintf(text, sizeof text, "%.4g", x);
  return text;
}

}  // namespace comera::store
