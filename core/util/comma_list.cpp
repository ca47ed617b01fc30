#include "core/util/comma_list.h"

#include "core/util/error.h"

#include <cerrno>
#include <cstdlib>

namespace comera {

namespace {

std::string trimmed(const std::string& s) {
  const auto first = s.find_first_not_of(' ');
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(' ') - first + 1);
}

[[noreturn]] void bad_item(const std::string& what, const std::string& text, const std::string& item,
                           const std::string& expected, const std::string& example) {
  throw Error(what + ": '" + item + "' in '" + text + "' is not " + expected +
              " (write a comma list such as " + example + ")");
}

}  // namespace

std::vector<std::string> split_list(const std::string& text, const std::string& what) {
  std::vector<std::string> items;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string item = trimmed(text.substr(start, comma - start));
    if (item.empty())
      throw Error(what + ": " + (trimmed(text).empty() ? std::string("the list is empty")
                                                        : "'" + text + "' has an empty item") +
                  " (write a comma list such as a,b,c, without spaces)");
    items.push_back(item);
    if (comma == std::string::npos) return items;
    start = comma + 1;
  }
}

std::vector<int64_t> int_list(const std::string& text, const std::string& what, int64_t min) {
  std::vector<int64_t> out;
  for (const auto& item : split_list(text, what)) {
    char* end = nullptr;
    errno = 0;
    const long long value = std::strtoll(item.c_str(), &end, 10);
    if (*end != '\0' || errno == ERANGE) bad_item(what, text, item, "a whole number", "4,8,16");
    if (value < min)
      throw Error(what + ": " + item + " in '" + text + "' is below " + std::to_string(min) +
                  " (every value must be >= " + std::to_string(min) + ")");
    out.push_back(value);
  }
  return out;
}

std::vector<double> number_list(const std::string& text, const std::string& what) {
  std::vector<double> out;
  for (const auto& item : split_list(text, what)) {
    char* end = nullptr;
    const double value = std::strtod(item.c_str(), &end);
    if (*end != '\0') bad_item(what, text, item, "a number", "0.5,1e3");
    out.push_back(value);
  }
  return out;
}

std::string join_list(const std::vector<int64_t>& values) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) out += (i ? "," : "") + std::to_string(values[i]);
  return out;
}

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace comera
