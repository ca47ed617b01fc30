#include "search/pareto/row_filter.h"

#include "core/util/error.h"

#include <cmath>
#include <limits>

namespace comera::pareto {

namespace {

bool read_number(const std::string& text, double& x) {
  if (text == "nan") return x = std::numeric_limits<double>::quiet_NaN(), true;
  if (text == "inf") return x = INFINITY, true;
  if (text == "-inf") return x = -INFINITY, true;
  try {
    size_t used = 0;
    x = std::stod(text, &used);
    return used == text.size();
  } catch (const std::logic_error&) {
    return false;
  }
}

std::string cell_text(const nlohmann::json& cell) {
  if (cell.is_string()) return cell.get<std::string>();
  if (cell.is_null()) return "";
  return cell.dump();
}

template <class T>
bool compare(const T& a, const std::string& op, const T& b) {
  if (op == "=") return a == b;
  if (op == "!=") return a != b;
  if (op == "<") return a < b;
  if (op == "<=") return a <= b;
  if (op == ">") return a > b;
  return a >= b;
}

// A condition's value as a number; "50%" reads as 0.5, as the tables print fractions.
bool value_number(const std::string& text, double& x) {
  if (text.size() > 1 && text.back() == '%' && read_number(text.substr(0, text.size() - 1), x))
    return x /= 100, true;
  return read_number(text, x);
}

bool matches(const nlohmann::json& cell, const Condition& c) {
  double a = 0, b = 0;
  if (!cell.is_null() && read_number(cell_text(cell), a) && value_number(c.value, b))
    return compare(a, c.op, b);
  return compare(cell_text(cell), c.op, c.value);
}

// A value that is no number against a column of numbers matches by text, which is never what
// was meant: refused, naming the column.
void check_value(const store::FlatTable& table, size_t column, const Condition& c) {
  double x = 0;
  if (value_number(c.value, x)) return;
  bool numbers = false;
  for (const auto& row : table.rows) {
    double a = 0;
    if (row[column].is_null()) continue;
    if (!read_number(cell_text(row[column]), a)) return;
    numbers = true;
  }
  if (numbers)
    throw Error("--where '" + c.column + c.op + c.value + "': " + table.columns[column] +
              " holds numbers; give a number (e.g. 0.5 or 50% for a fraction)");
}

}  // namespace

double cell_number(const nlohmann::json& cell) {
  double x = std::numeric_limits<double>::quiet_NaN();
  if (cell.is_number()) return cell.get<double>();
  if (cell.is_string() && read_number(cell.get<std::string>(), x)) return x;
  return std::numeric_limits<double>::quiet_NaN();
}

Condition parse_condition(const std::string& text) {
  // The first operator character splits; two-character operators first.
  const auto at = text.find_first_of("=!<>");
  if (at == std::string::npos || at == 0)
    throw Error("--where '" + text + "': expected COLUMN OP VALUE with OP one of = != < <= > >= "
                "(e.g. --where kind=late or --where gamma<=0.01)");
  const bool two = at + 1 < text.size() && text[at + 1] == '=';
  Condition c{text.substr(0, at), text.substr(at, two ? 2 : 1), text.substr(at + (two ? 2 : 1))};
  if (c.op == "!")
    throw Error("--where '" + text + "': '!' alone is not an operator (use !=)");
  auto trim = [](std::string s) {
    const auto b = s.find_first_not_of(' '), e = s.find_last_not_of(' ');
    return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
  };
  c.column = trim(c.column), c.value = trim(c.value);
  return c;
}

size_t find_column(const store::FlatTable& table, const std::string& name) {
  for (const std::string prefix : {"", "config.point.", "config.", "objective."})
    for (size_t i = 0; i < table.columns.size(); ++i)
      if (table.columns[i] == prefix + name) return i;
  std::string similar;
  for (const auto& column : table.columns)
    if (column.find(name) != std::string::npos || column.rfind("config.point.", 0) == 0 ||
        column.rfind("objective.", 0) == 0)
      similar += (similar.empty() ? "" : ", ") + column;
  throw Error("no column '" + name + "' in the trials" +
              (similar.empty() ? std::string() : " (columns include: " + similar + ")"));
}

std::vector<size_t> filter_rows(const store::FlatTable& table,
                                const std::vector<Condition>& conditions) {
  std::vector<size_t> columns;
  if (table.rows.empty()) return {};
  for (const auto& c : conditions) {
    columns.push_back(find_column(table, c.column));
    check_value(table, columns.back(), c);
  }
  std::vector<size_t> rows;
  for (size_t r = 0; r < table.rows.size(); ++r) {
    bool keep = true;
    for (size_t i = 0; i < conditions.size() && keep; ++i)
      keep = matches(table.rows[r][columns[i]], conditions[i]);
    if (keep) rows.push_back(r);
  }
  return rows;
}

}  // namespace comera::pareto
