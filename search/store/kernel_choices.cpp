#include "search/store/kernel_choices.h"

#include "search/store/sql_now.h"

#include <SQLiteCpp/Column.h>
#include <SQLiteCpp/Statement.h>

namespace comera::store {

namespace {

const char* kColumns =
    "layer_modes, ranks, token_bucket, dtype, device, threads, torch_version, fingerprint, choice, "
    "median_ms, repeats, git_commit, created_at";

KernelChoice read_choice(SQLite::Statement& q) {
  KernelChoice c;
  c.key = {q.getColumn(0).getString(), q.getColumn(1).getString(), q.getColumn(2).getInt64(),
           q.getColumn(3).getString(), q.getColumn(4).getString(), q.getColumn(5).getInt(),
           q.getColumn(6).getString()};
  c.fingerprint = q.getColumn(7).getString();
  c.choice = q.getColumn(8).getString();
  c.median_ms = q.getColumn(9).getDouble();
  c.repeats = q.getColumn(10).getInt64();
  c.git_commit = q.getColumn(11).getString();
  c.created_at = q.getColumn(12).getString();
  return c;
}

void bind_key(SQLite::Statement& q, const KernelKey& key) {
  q.bind(1, key.layer_modes);
  q.bind(2, key.ranks);
  q.bind(3, key.token_bucket);
  q.bind(4, key.dtype);
  q.bind(5, key.device);
  q.bind(6, key.threads);
  q.bind(7, key.torch_version);
}

}  // namespace

void put_kernel_choice(ResultsDb& db, const KernelChoice& choice) {
  db.write([&] {
    SQLite::Statement insert(db.sql(), std::string("INSERT OR REPLACE INTO kernel_choices (") +
                                           kColumns +
                                           ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                                           "COALESCE(NULLIF(?, ''), " COMERA_SQL_NOW "))");
    bind_key(insert, choice.key);
    insert.bind(8, choice.fingerprint);
    insert.bind(9, choice.choice);
    insert.bind(10, choice.median_ms);
    insert.bind(11, choice.repeats);
    insert.bind(12, choice.git_commit);
    insert.bind(13, choice.created_at);
    insert.exec();
  });
}

std::optional<KernelChoice> get_kernel_choice(ResultsDb& db, const KernelKey& key,
                                              const std::string& fingerprint) {
  SQLite::Statement q(db.sql(), std::string("SELECT ") + kColumns +
                                    " FROM kernel_choices WHERE layer_modes = ? AND ranks = ? AND "
                                    "token_bucket = ? AND dtype = ? AND device = ? AND threads = ? "
                                    "AND torch_version = ? AND fingerprint = ?");
  bind_key(q, key);
  q.bind(8, fingerprint);
  if (!q.executeStep()) return std::nullopt;
  return read_choice(q);
}

std::vector<KernelChoice> list_kernel_choices(ResultsDb& db) {
  SQLite::Statement q(db.sql(),
                      std::string("SELECT ") + kColumns + " FROM kernel_choices ORDER BY id");
  std::vector<KernelChoice> out;
  while (q.executeStep()) out.push_back(read_choice(q));
  return out;
}

}  // namespace comera::store
