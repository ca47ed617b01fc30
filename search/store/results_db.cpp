#include "search/store/results_db.h"

#include "core/util/error.h"
#include "search/store/schema.h"

#include <SQLiteCpp/Column.h>
#include <SQLiteCpp/Statement.h>
#include <sqlite3.h>

#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <functional>
#include <thread>

namespace comera::store {

namespace {

constexpr int kBusyTimeoutMs = 10000;

enum class FileKind { Missing, Empty, Comera };

std::string in_quotes(const std::string& path) { return "'" + path + "'"; }

std::string untouched(const std::string& path) {
  return in_quotes(path) + " was only read, not changed";
}

Error damaged(const std::string& path, const std::string& detail) {
  return Error(in_quotes(path) + " is a damaged SQLite database (" + detail + "); " +
               untouched(path) + ". Restore a copy, or salvage it with `sqlite3 " + path +
               " .recover | sqlite3 recovered.db`");
}

// Classifies the file through a read-only connection, so nothing it finds is ever modified.
// Returns Missing, Empty (a new database) or Comera (and its version); throws for the rest.
FileKind inspect(const std::string& path, int& version) {
  version = 0;
  if (path.empty() || path == ":memory:")
    throw Error("no database file given: pass --db a file path, e.g. " +
                std::string(kDefaultDbPath));
  if (!std::filesystem::exists(path)) return FileKind::Missing;
  if (std::filesystem::is_directory(path))
    throw Error(in_quotes(path) + " is a folder: give --db the path of a database file, e.g. " +
                std::string(kDefaultDbPath));
  std::vector<std::string> tables;
  try {
    SQLite::Database db(path, SQLite::OPEN_READONLY, kBusyTimeoutMs);
    SQLite::Statement list(db, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
    while (list.executeStep()) tables.push_back(list.getColumn(0).getString());
    if (tables.empty()) return FileKind::Empty;
    const std::string check = db.execAndGet("PRAGMA quick_check(1)").getString();
    if (check != "ok") throw damaged(path, "quick_check: " + check);
    if (db.tableExists("schema_version")) {
      version = schema_version(db);
      return FileKind::Comera;
    }
  } catch (const SQLite::Exception& e) {
    const int code = e.getErrorCode();
    if (code == SQLITE_NOTADB)
      throw Error(in_quotes(path) + " is not a SQLite database (" + e.what() + "); " +
                  untouched(path) + ". Give --db a comera results database (default " +
                  kDefaultDbPath + ") or a new path");
    if (code == SQLITE_CORRUPT) throw damaged(path, e.what());
    throw Error("cannot read " + in_quotes(path) + ": " + e.what() +
                "; check that the file and its folder are readable");
  }
  std::string names;
  for (size_t i = 0; i < tables.size() && i < 5; ++i) names += (i ? ", " : "") + tables[i];
  if (tables.size() > 5) names += ", ...";
  throw Error(in_quotes(path) + " is a SQLite database but not a comera results database (tables " +
              names + ", no schema_version); " + untouched(path) +
              ". Give --db another path (default " + kDefaultDbPath + ")");
}

void check_version(const std::string& path, int version) {
  const int latest = latest_schema_version();
  if (version < latest)
    throw Error(in_quotes(path) + " has results schema version " + std::to_string(version) +
                " but this comera uses version " + std::to_string(latest) +
                ": run `comera db upgrade --db " + path +
                "` to migrate it forward (copy the file first to keep the old version)");
  if (version > latest)
    throw Error(in_quotes(path) + " has results schema version " + std::to_string(version) +
                ", newer than this comera's " + std::to_string(latest) +
                ": use a newer comera build (`comera db upgrade` only migrates forward)");
}

std::unique_ptr<SQLite::Database> connect_read_write(const std::string& path) {
  const auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  auto db = std::make_unique<SQLite::Database>(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE,
                                               kBusyTimeoutMs);
  db->exec("PRAGMA foreign_keys = ON");
  // WAL lets readers run beside the one writer; the mode is stored in the file, set it once.
  if (db->execAndGet("PRAGMA journal_mode").getString() != "wal")
    db->execAndGet("PRAGMA journal_mode = WAL");
  db->exec("PRAGMA synchronous = NORMAL");
  return db;
}

// A new database is built whole under a private name and linked into place, so no other
// process ever opens it half made (SQLite answers "locked" at once, without waiting, when
// processes race to switch one new file to WAL). The loser of a race opens the winner's file.
// Returns false where the file system has no hard links; the caller then builds it in place.
bool create_complete(const std::string& path) {
  const std::string staged = path + ".new-" + std::to_string(getpid()) + "-" +
                             std::to_string(std::hash<std::thread::id>()(std::this_thread::get_id()));
  std::filesystem::remove(staged);
  {
    auto db = connect_read_write(staged);
    migrate(*db, migrations());
  }
  const bool placed = link(staged.c_str(), path.c_str()) == 0 || errno == EEXIST;
  std::filesystem::remove(staged);
  return placed;
}

}  // namespace

ResultsDb ResultsDb::open(const std::string& path, Mode mode) {
  int version = 0;
  const FileKind kind = inspect(path, version);
  if (mode == Mode::ReadOnly) {
    if (kind != FileKind::Comera)
      throw Error("no results in " + in_quotes(path) +
                  (kind == FileKind::Missing ? " (no such file)" : " (empty database)") +
                  ": give --db the database your runs wrote (default " + kDefaultDbPath + ")");
    check_version(path, version);
    auto db = std::make_unique<SQLite::Database>(path, SQLite::OPEN_READONLY, kBusyTimeoutMs);
    db->exec("PRAGMA query_only = ON");
    return ResultsDb(path, std::move(db), true);
  }
  const bool built = kind == FileKind::Missing && create_complete(path);
  if (kind == FileKind::Comera) check_version(path, version);
  auto db = connect_read_write(path);
  if (kind != FileKind::Comera && !built) migrate(*db, migrations());
  return ResultsDb(path, std::move(db), false);
}

int ResultsDb::upgrade(const std::string& path) {
  int version = 0;
  if (inspect(path, version) != FileKind::Comera)
    throw Error("no comera results database at " + in_quotes(path) +
                " to upgrade: give --db an existing database");
  if (version > latest_schema_version()) check_version(path, version);
  auto db = connect_read_write(path);
  return migrate(*db, migrations());
}

SQLite::Transaction ResultsDb::begin_write() {
  if (read_only_)
    throw Error(in_quotes(path_) + " was opened read-only: open it with Mode::ReadWrite to write");
  try {
    return SQLite::Transaction(*db_, SQLite::TransactionBehavior::IMMEDIATE);
  } catch (const SQLite::Exception& e) {
    if (e.getErrorCode() != SQLITE_BUSY) throw;
    throw Error(in_quotes(path_) + " stayed locked by another writer for " +
                std::to_string(kBusyTimeoutMs / 1000) +
                " s: a process holds a long write transaction; find it with `fuser " + path_ +
                "` or retry");
  }
}

}  // namespace comera::store
