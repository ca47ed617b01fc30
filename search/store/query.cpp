#include "search/store/query.h"

#include "core/util/error.h"

#include <sqlite3.h>

#include <memory>

namespace comera::store {

FlatTable read_only_query(ResultsDb& db, const std::string& sql) {
  if (!db.read_only())
    throw Error("queries run on a read-only connection: open " + db.path() +
                " with Mode::ReadOnly");
  sqlite3* handle = db.sql().getHandle();
  sqlite3_stmt* raw = nullptr;
  const char* tail = nullptr;
  if (sqlite3_prepare_v2(handle, sql.c_str(), static_cast<int>(sql.size()), &raw, &tail) !=
      SQLITE_OK)
    throw Error("query does not compile: " + std::string(sqlite3_errmsg(handle)) +
                "; list the tables with `comera query \"SELECT name FROM sqlite_master\"`");
  std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> stmt(raw, sqlite3_finalize);
  if (!stmt) throw Error("query is empty: give one SELECT statement");
  for (const char* c = tail; c && *c; ++c)
    if (*c != ' ' && *c != '\n' && *c != '\t' && *c != '\r' && *c != ';')
      throw Error("query holds more than one statement (from '" + std::string(c) +
                  "'): give one statement");
  if (!sqlite3_stmt_readonly(stmt.get()))
    throw Error("`" + sql + "` would change " + db.path() +
                ": queries are read-only; edit the file with `sqlite3 " + db.path() +
                "` if you really mean to (stop running workers first)");
  FlatTable table;
  const int n = sqlite3_column_count(stmt.get());
  for (int i = 0; i < n; ++i) table.columns.push_back(sqlite3_column_name(stmt.get(), i));
  int rc = SQLITE_ROW;
  while ((rc = sqlite3_step(stmt.get())) == SQLITE_ROW) {
    std::vector<nlohmann::json> row;
    for (int i = 0; i < n; ++i) {
      switch (sqlite3_column_type(stmt.get(), i)) {
        case SQLITE_INTEGER:
          row.emplace_back(static_cast<int64_t>(sqlite3_column_int64(stmt.get(), i)));
          break;
        case SQLITE_FLOAT:
          row.push_back(FlatTable::real(sqlite3_column_double(stmt.get(), i)));
          break;
        case SQLITE_TEXT:
          row.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(stmt.get(), i)));
          break;
        case SQLITE_BLOB:
          row.emplace_back("<blob of " + std::to_string(sqlite3_column_bytes(stmt.get(), i)) +
                           " bytes>");
          break;
        default:
          row.emplace_back(nullptr);
      }
    }
    table.rows.push_back(std::move(row));
  }
  if (rc != SQLITE_DONE) throw Error("query failed: " + std::string(sqlite3_errmsg(handle)));
  return table;
}

}  // namespace comera::store
