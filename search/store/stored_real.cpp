#include "search/store/stored_real.h"

#include "core/util/error.h"

#include <SQLiteCpp/Column.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>

namespace comera::store {

std::string real_kind(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  return "finite";
}

void bind_real(SQLite::Statement& stmt, int value_index, int kind_index, double x) {
  if (std::isnan(x))
    stmt.bind(value_index);
  else
    stmt.bind(value_index, x);
  stmt.bind(kind_index, real_kind(x));
}

double read_real(const SQLite::Statement& stmt, int value_column, int kind_column) {
  const std::string kind = stmt.getColumn(kind_column).getString();
  if (kind == "nan") return std::numeric_limits<double>::quiet_NaN();
  if (kind == "inf") return std::numeric_limits<double>::infinity();
  if (kind == "-inf") return -std::numeric_limits<double>::infinity();
  if (kind != "finite" || stmt.isColumnNull(value_column))
    throw Error("stored real has kind '" + kind + "' and value " +
                stmt.getColumn(value_column).getString() +
                ": the row was edited by hand; fix it with sqlite3");
  return stmt.getColumn(value_column).getDouble();
}

std::string format_real(double x) {
  if (!std::isfinite(x)) return real_kind(x);
  if (std::trunc(x) == x && std::fabs(x) < 1e15) return std::to_string(static_cast<int64_t>(x));
  // nlohmann's float output is the shortest text that reads back to the same double.
  return nlohmann::json(x).dump();
}

}  // namespace comera::store
