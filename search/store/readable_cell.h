#pragma once
// Table cells rounded for reading, by what the column measures: accuracies as percentages,
// parameter counts with thousands separators, compression as "48.9x", other numbers to 4
// significant digits. Text output only: --json and CSV keep full precision.
#include <nlohmann/json.hpp>

#include <string>

namespace comera::store {

std::string readable_cell(const std::string& column, const nlohmann::json& cell);

}  // namespace comera::store
