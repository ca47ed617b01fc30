#pragma once
// Comma-separated lists ("4096,40000", "attention,ffn_in", "1,12,30,12,1"): the one parser for
// list flags of the CLI and for lists stored as text. Errors name `what` (a flag such as
// "--ids", or the setting) and show how to write the list.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace comera {

// The items of "a,b,c", each trimmed of spaces; an empty list or an empty item throws.
std::vector<std::string> split_list(const std::string& text, const std::string& what);
// Whole numbers, each >= min.
std::vector<int64_t> int_list(const std::string& text, const std::string& what,
                              int64_t min = std::numeric_limits<int64_t>::min());
std::vector<double> number_list(const std::string& text, const std::string& what);
// "1,12,30": the inverse of int_list.
std::string join_list(const std::vector<int64_t>& values);
// "a, b, c": names for a message.
std::string join_names(const std::vector<std::string>& names);

}  // namespace comera
