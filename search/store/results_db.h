#pragma once
// The results database: one SQLite file holding every study, trial, metric and kernel choice.
// Opening checks that the file is a comera database of this build's schema version and leaves
// any other file untouched: nothing is written to a file before it is identified.
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Transaction.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace comera::store {

inline const char* const kDefaultDbPath = "results/comera.db";
// SQLite's application_id of a comera database ("cmra"), set when it is created. Databases made
// before it are recognised by their tables.
inline constexpr int32_t kApplicationId = 0x636d7261;
// How long a write waits, in all, for another process's write lock before it fails: long
// writers (a merge) must not fail a running trial's heartbeat or epoch record.
inline constexpr std::chrono::minutes kWritePatience{5};

class ResultsDb {
 public:
  enum class Mode {
    ReadWrite,  // creates the file (and its folder) when missing
    ReadOnly,   // the file must exist; every write fails (queries, listings); works on
                // read-only files and in read-only folders
  };

  // Throws comera::Error naming the file and the fix when it is not a regular file (a folder, a
  // pipe, a device), not a SQLite database, damaged, belongs to something else, or has another
  // schema version; such a file is only read, never written. ReadWrite also throws, before any
  // write, when the file or its folder is read-only. `flag` is the option the user gave the path
  // with, which the messages' fixes name ("--db", or merge's "-o").
  static ResultsDb open(const std::string& path, Mode mode = Mode::ReadWrite,
                        const std::string& flag = "--db");

  // Brings an older comera database forward through the migration steps; returns how many ran.
  static int upgrade(const std::string& path);

  SQLite::Database& sql() { return *db_; }
  const std::string& path() const { return path_; }
  bool read_only() const { return read_only_; }

  // Runs fn() inside BEGIN IMMEDIATE ... COMMIT: the write lock is taken up front, so two
  // processes never interleave read-then-write. Keep fn short; it rolls back if fn throws.
  // While another process holds the lock, retries with growing pauses for kWritePatience.
  // Inside another write(), fn joins that transaction: the outer one commits or rolls back all.
  template <class F>
  auto write(F&& fn) -> decltype(fn()) {
    if (in_transaction()) return fn();
    SQLite::Transaction tx = begin_write();
    if constexpr (std::is_void_v<decltype(fn())>) {
      fn();
      tx.commit();
    } else {
      auto result = fn();
      tx.commit();
      return result;
    }
  }

 private:
  ResultsDb(std::string path, std::unique_ptr<SQLite::Database> db, bool read_only)
      : path_(std::move(path)), db_(std::move(db)), read_only_(read_only) {}
  SQLite::Transaction begin_write();
  bool in_transaction() const;

  std::string path_;
  std::unique_ptr<SQLite::Database> db_;
  bool read_only_;
};

}  // namespace comera::store
