#include "search/store/results_db.h"

#include "core/util/error.h"
#include "search/store/schema.h"

#include <SQLiteCpp/Column.h>
#include <SQLiteCpp/Statement.h>
#include <sqlite3.h>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <thread>
#include <vector>

namespace comera::store {

namespace {

namespace fs = std::filesystem;

constexpr int kBusyTimeoutMs = 10000;

enum class FileKind { Missing, Empty, Comera };

struct Inspection {
  FileKind kind = FileKind::Missing;
  int version = 0;
  bool stamped = false;  // carries kApplicationId (older comera databases do not)
};

std::string in_quotes(const std::string& path) { return "'" + path + "'"; }

std::string untouched(const std::string& path) {
  return in_quotes(path) + " was only read, not changed";
}

const char* const kReaders = "reading commands (runs list, runs show, query, export, pareto) work "
                             "on it as it is";

Error damaged(const std::string& path, const std::string& detail) {
  return Error(in_quotes(path) + " is a damaged SQLite database (" + detail + "); " +
               untouched(path) + ". Restore a copy, or salvage it with `sqlite3 " + path +
               " .recover | sqlite3 recovered.db`");
}

fs::path folder_of(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? fs::path(".") : parent;
}

// Why this process cannot write p (a read-only mount, no permission), or "" when it can.
std::string unwritable(const fs::path& p) {
  return access(p.c_str(), W_OK) == 0 ? "" : std::strerror(errno);
}

// False when nothing is at path; throws, without opening it, for anything but a regular file
// (opening a named pipe blocks, and SQLite puts side files beside a device such as /dev/null).
bool regular_file_at(const std::string& path, const std::string& flag) {
  std::error_code ec;
  const fs::file_type type = fs::status(path, ec).type();
  if (type == fs::file_type::not_found) return false;
  if (ec)
    throw Error("cannot read " + in_quotes(path) + " (" + ec.message() +
                "): check that it and its folders are readable");
  if (type == fs::file_type::directory)
    throw Error(in_quotes(path) + " is a folder: give " + flag + " the path of a database file, e.g. " +
                std::string(kDefaultDbPath));
  if (type != fs::file_type::regular) {
    const char* what = type == fs::file_type::fifo        ? "a named pipe"
                       : type == fs::file_type::character ? "a character device"
                       : type == fs::file_type::block     ? "a block device"
                       : type == fs::file_type::socket    ? "a socket"
                                                          : "an unknown kind of file";
    throw Error(in_quotes(path) + " is not a regular file but " + what +
                ", so it cannot hold a results database; it was not opened. Give " + flag +
                " a database file, e.g. " + std::string(kDefaultDbPath));
  }
  return true;
}

// "file:" URI of a path: SQLite reads '?' and '#' as URI syntax, '%' as an escape.
std::string file_uri(const std::string& path) {
  std::string uri = "file:";
  for (char c : fs::absolute(path).string()) {
    if (c == '?' || c == '#' || c == '%') {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", static_cast<unsigned char>(c));
      uri += hex;
    } else {
      uri += c;
    }
  }
  return uri;
}

// A read-only connection. SQLite reads a WAL database through a shared-memory file beside it;
// in a folder this process cannot write, where that file cannot be made, the database is read
// as immutable instead, unless its -wal file holds changes not yet in it.
std::unique_ptr<SQLite::Database> connect_read_only(const std::string& path, const std::string& flag) {
  const fs::path folder = folder_of(path);
  if (unwritable(folder).empty() || fs::exists(path + "-shm"))
    return std::make_unique<SQLite::Database>(path, SQLite::OPEN_READONLY, kBusyTimeoutMs);
  std::error_code ec;
  if (fs::exists(path + "-wal") && fs::file_size(path + "-wal", ec) > 0)
    throw Error(in_quotes(path + "-wal") + " holds changes not yet written into " +
                in_quotes(path) + ", and SQLite cannot read them from the read-only folder " +
                in_quotes(folder.string()) +
                ": copy both files to a writable folder and give " + flag + " the copy");
  return std::make_unique<SQLite::Database>(file_uri(path) + "?immutable=1",
                                            SQLite::OPEN_READONLY | SQLite::OPEN_URI,
                                            kBusyTimeoutMs);
}

// Classifies the file through a read-only connection, so nothing it finds is ever modified.
// Returns Missing, Empty (a new database) or Comera (and its version); throws for the rest.
// A comera database carries kApplicationId, or (made before that) every comera table.
Inspection inspect(const std::string& path, const std::string& flag) {
  if (path.empty() || path == ":memory:")
    throw Error("no database file given: pass " + flag + " a file path, e.g. " +
                std::string(kDefaultDbPath));
  if (!regular_file_at(path, flag)) return {};
  std::vector<std::string> tables;
  int application_id = 0;
  try {
    auto db = connect_read_only(path, flag);
    application_id = db->execAndGet("PRAGMA application_id").getInt();
    SQLite::Statement list(*db, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
    while (list.executeStep()) tables.push_back(list.getColumn(0).getString());
    const bool ours = application_id == kApplicationId;
    if (db->execAndGet("SELECT COUNT(*) FROM sqlite_master").getInt() == 0 &&
        (ours || application_id == 0))
      return {FileKind::Empty};
    const std::string check = db->execAndGet("PRAGMA quick_check(1)").getString();
    if (check != "ok") throw damaged(path, "quick_check: " + check);
    auto has = [&](const std::string& table) {
      return std::find(tables.begin(), tables.end(), table) != tables.end();
    };
    const auto& needed = results_tables();
    const bool legacy = application_id == 0 && has("schema_version") &&
                        std::all_of(needed.begin(), needed.end(), has);
    if (ours && !has("schema_version")) throw damaged(path, "no schema_version table");
    if (ours || legacy) return {FileKind::Comera, schema_version(*db), ours};
  } catch (const SQLite::Exception& e) {
    const int code = e.getErrorCode();
    if (code == SQLITE_NOTADB)
      throw Error(in_quotes(path) + " is not a SQLite database (" + e.what() + "); " +
                  untouched(path) + ". Give " + flag + " a comera results database (default " +
                  kDefaultDbPath + ") or a new path");
    if (code == SQLITE_CORRUPT) throw damaged(path, e.what());
    throw Error("cannot read " + in_quotes(path) + ": " + e.what() +
                "; check that the file and its folder are readable");
  }
  std::string names;
  for (size_t i = 0; i < tables.size() && i < 5; ++i) names += (i ? ", " : "") + tables[i];
  if (tables.size() > 5) names += ", ...";
  if (tables.empty()) names = "none";
  throw Error(in_quotes(path) + " is a SQLite database but not a comera results database (tables " +
              names +
              (application_id ? "; application id " + std::to_string(application_id) : "") +
              "); " + untouched(path) + ". Give " + flag + " another path (default " + kDefaultDbPath +
              ")");
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

// Writing needs the file and its folder (SQLite keeps its -wal and -shm files there, and a new
// database is built beside its place): checked before anything is written.
void require_writable(const std::string& path, FileKind kind) {
  if (kind != FileKind::Missing) {
    const std::string why = unwritable(path);
    if (!why.empty())
      throw Error(in_quotes(path) + " is read-only here (" + why +
                  ") and this command writes results: make it writable (chmod u+w " + path +
                  ") or copy it to a writable folder and give the copy; " + kReaders);
  }
  fs::path folder = folder_of(path);
  while (!folder.empty() && !fs::exists(folder)) folder = folder.parent_path();
  if (folder.empty()) folder = ".";
  const std::string why = unwritable(folder);
  if (why.empty()) return;
  if (kind == FileKind::Missing)
    throw Error("cannot create " + in_quotes(path) + ": the folder " + in_quotes(folder.string()) +
                " is read-only here (" + why + "); give a path in a writable folder");
  throw Error(in_quotes(path) + " is in the read-only folder " + in_quotes(folder.string()) + " (" +
              why + "), where SQLite cannot keep its journal files, and this command writes "
              "results: copy it to a writable folder and give the copy; " + kReaders);
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

void stamp(SQLite::Database& db) {
  db.exec("PRAGMA application_id = " + std::to_string(kApplicationId));
}

// The schema, and the mark that tells comera databases from others.
void initialise(SQLite::Database& db) {
  migrate(db, migrations());
  stamp(db);
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
    initialise(*db);
  }
  const bool placed = link(staged.c_str(), path.c_str()) == 0 || errno == EEXIST;
  std::filesystem::remove(staged);
  return placed;
}

}  // namespace

ResultsDb ResultsDb::open(const std::string& path, Mode mode, const std::string& flag) {
  const Inspection found = inspect(path, flag);
  if (mode == Mode::ReadOnly) {
    if (found.kind != FileKind::Comera)
      throw Error("no results in " + in_quotes(path) +
                  (found.kind == FileKind::Missing ? " (no such file)" : " (empty database)") +
                  ": give " + flag + " the database your runs wrote (default " + kDefaultDbPath + ")");
    check_version(path, found.version);
    auto db = connect_read_only(path, flag);
    db->exec("PRAGMA query_only = ON");
    return ResultsDb(path, std::move(db), true);
  }
  if (found.kind == FileKind::Comera) check_version(path, found.version);
  require_writable(path, found.kind);
  const bool built = found.kind == FileKind::Missing && create_complete(path);
  auto db = connect_read_write(path);
  if (found.kind != FileKind::Comera && !built) initialise(*db);
  if (found.kind == FileKind::Comera && !found.stamped) stamp(*db);
  return ResultsDb(path, std::move(db), false);
}

int ResultsDb::upgrade(const std::string& path) {
  const Inspection found = inspect(path, "--db");
  if (found.kind != FileKind::Comera)
    throw Error("no comera results database at " + in_quotes(path) +
                " to upgrade: give --db an existing database");
  if (found.version > latest_schema_version()) check_version(path, found.version);
  require_writable(path, found.kind);
  auto db = connect_read_write(path);
  if (!found.stamped) stamp(*db);
  return migrate(*db, migrations());
}

bool ResultsDb::in_transaction() const { return sqlite3_get_autocommit(db_->getHandle()) == 0; }

SQLite::Transaction ResultsDb::begin_write() {
  if (read_only_)
    throw Error(in_quotes(path_) + " was opened read-only: open it with Mode::ReadWrite to write");
  // SQLite's busy timeout waits up to 10 s per try; some lock states answer busy at once, and a
  // long writer elsewhere may hold the lock for minutes.
  const auto start = std::chrono::steady_clock::now();
  std::chrono::milliseconds pause(50);
  for (;;) {
    try {
      return SQLite::Transaction(*db_, SQLite::TransactionBehavior::IMMEDIATE);
    } catch (const SQLite::Exception& e) {
      if (e.getErrorCode() != SQLITE_BUSY) throw;
      if (std::chrono::steady_clock::now() - start + pause > kWritePatience)
        throw Error(in_quotes(path_) + " stayed locked by another writer for over " +
                    std::to_string(kWritePatience.count()) +
                    " minutes: a process holds a long write transaction; find it with `fuser " +
                    path_ + "` and let it finish, then run this again");
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(5000));
  }
}

}  // namespace comera::store
