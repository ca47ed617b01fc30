#include "search/store/flat_table.h"

#include "search/store/stored_real.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace comera::store {

namespace {

std::string cell_text(const nlohmann::json& cell) {
  if (cell.is_null()) return "";
  if (cell.is_string()) return cell.get<std::string>();
  if (cell.is_number_float()) return format_real(cell.get<double>());
  return cell.dump();
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// The column names every form prints: a repeated name gets the first free "_2", "_3", ... so
// that a JSON object keeps every column (`SELECT a.value, b.value`; a point axis named like an
// objective) and CSV and text say the same.
std::vector<std::string> output_columns(const FlatTable& table) {
  std::set<std::string> taken(table.columns.begin(), table.columns.end()), seen;
  std::vector<std::string> out;
  for (const auto& column : table.columns) {
    std::string name = column;
    for (int k = 2; seen.count(name) || (name != column && taken.count(name)); ++k) name = column + "_" + std::to_string(k);
    seen.insert(name);
    taken.insert(name);
    out.push_back(name);
  }
  return out;
}

nlohmann::json row_object(const std::vector<std::string>& columns, const std::vector<nlohmann::json>& row) {
  nlohmann::json object = nlohmann::json::object();
  for (size_t i = 0; i < columns.size(); ++i) object[columns[i]] = row[i];
  return object;
}

}  // namespace

nlohmann::json FlatTable::real(double x) {
  if (std::isfinite(x)) return x;
  return format_real(x);
}

void write_csv(std::ostream& out, const FlatTable& table) {
  const auto columns = output_columns(table);
  for (size_t i = 0; i < columns.size(); ++i) out << (i ? "," : "") << csv_field(columns[i]);
  out << "\n";
  for (const auto& row : table.rows) {
    for (size_t i = 0; i < row.size(); ++i) out << (i ? "," : "") << csv_field(cell_text(row[i]));
    out << "\n";
  }
}

void write_jsonl(std::ostream& out, const FlatTable& table) {
  const auto columns = output_columns(table);
  for (const auto& row : table.rows) out << row_object(columns, row).dump() << "\n";
}

nlohmann::json to_json(const FlatTable& table) {
  const auto columns = output_columns(table);
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : table.rows) rows.push_back(row_object(columns, row));
  return rows;
}

void write_text(std::ostream& out, const FlatTable& table) {
  const auto columns = output_columns(table);
  std::vector<size_t> width;
  for (const auto& column : columns) width.push_back(column.size());
  for (const auto& row : table.rows)
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], cell_text(row[i]).size());
  auto line = [&](auto text_of) {
    std::string s;
    for (size_t i = 0; i < width.size(); ++i) {
      std::string cell = text_of(i);
      if (i + 1 < width.size()) cell.resize(width[i] + 2, ' ');
      s += cell;
    }
    out << s << "\n";
  };
  line([&](size_t i) { return columns[i]; });
  for (const auto& row : table.rows) line([&](size_t i) { return cell_text(row[i]); });
}

}  // namespace comera::store
