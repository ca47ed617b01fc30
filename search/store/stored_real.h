#pragma once
// How a double that may be NaN or +-inf is stored: SQLite turns NaN into NULL, so each value is
// a pair of columns, `value REAL` (the number; +-inf kept, NULL for NaN) and `kind TEXT` in
// {'finite', 'nan', 'inf', '-inf'}. Queries can still sort and filter on `value`.
#include <SQLiteCpp/Statement.h>

#include <string>

namespace comera::store {

// The kind text of x.
std::string real_kind(double x);

// Binds x to the value and kind parameters of a statement.
void bind_real(SQLite::Statement& stmt, int value_index, int kind_index, double x);

// Reads back what bind_real stored (value column, kind column).
double read_real(const SQLite::Statement& stmt, int value_column, int kind_column);

// "nan", "inf", "-inf", an integer when x is one (below 1e15), else the shortest decimal that
// reads back as x: for text and CSV output.
std::string format_real(double x);

}  // namespace comera::store
