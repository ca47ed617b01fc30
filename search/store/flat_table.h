#pragma once
// A flat table (named columns, rows of JSON scalars) and its output forms: what queries,
// listings and exports print. Non-finite numbers are cells "nan", "inf", "-inf". A repeated
// column name is printed "_2", "_3", ... in every form, so JSON keeps every column.
#include <nlohmann/json.hpp>

#include <ostream>
#include <string>
#include <vector>

namespace comera::store {

struct FlatTable {
  std::vector<std::string> columns;
  std::vector<std::vector<nlohmann::json>> rows;  // each row has columns.size() cells

  // A number cell: a JSON number, or "nan" / "inf" / "-inf".
  static nlohmann::json real(double x);
};

void write_csv(std::ostream& out, const FlatTable& table);
void write_jsonl(std::ostream& out, const FlatTable& table);  // one object per line
nlohmann::json to_json(const FlatTable& table);               // array of objects
void write_text(std::ostream& out, const FlatTable& table);   // aligned columns

}  // namespace comera::store
