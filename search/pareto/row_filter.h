#pragma once
// `--where` conditions on the rows of a flat table (trial exports): COLUMN OP VALUE with OP one
// of = != < <= > >=. A column may be named in full ("config.point.gamma") or by its tail after
// "config.point.", "config." or "objective." ("gamma", "kind", "eval_loss"). Values compare as
// numbers when both sides read as numbers ("50%" as 0.5), else as text; a value that is no
// number against a column of numbers is an error.
#include "search/store/flat_table.h"

#include <string>
#include <vector>

namespace comera::pareto {

struct Condition {
  std::string column, op, value;
};

// Throws comera::Error naming the condition and the accepted form.
Condition parse_condition(const std::string& text);

// Rows of `table` meeting every condition (indices, increasing). A column no alias finds throws,
// listing similar columns.
std::vector<size_t> filter_rows(const store::FlatTable& table,
                                const std::vector<Condition>& conditions);

// The column index of `name` or its alias; throws as above.
size_t find_column(const store::FlatTable& table, const std::string& name);

// A cell as a number: JSON numbers, "nan", "inf", "-inf", numeric text; NaN otherwise.
double cell_number(const nlohmann::json& cell);

}  // namespace comera::pareto
