#pragma once
// An output file (a table, a plot, a report) named on the command line. It is checked before any
// work: never a file the command reads, never a SQLite database. It is written whole under a
// temporary name in its folder and then renamed into place, so a failure keeps the old file.
#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace comera {

class OutputFile {
 public:
  // Throws comera::Error naming `flag` (e.g. "--plot"), the path and the fix when `path` is a
  // folder, an existing SQLite database, or one of `reads` (or its -wal, -shm, -journal side
  // files): by filesystem identity, so links and other spellings count; by resolved path while
  // either does not exist yet. A read ending in '/' is a folder (data, checkpoints): no output
  // inside it. Creates nothing.
  OutputFile(std::string path, std::string flag, std::vector<std::string> reads);

  const std::string& path() const { return path_; }
  // Throws when `other` names the same file: one output would replace the other.
  void require_distinct(const OutputFile& other) const;

  // Checks again (a file read may have appeared since), calls fill with a fresh temporary path
  // beside the output (its folder created if missing), then renames it into place. If fill
  // throws, the temporary file goes and the old output stays. An existing target that is not a
  // regular file (/dev/stdout, a pipe) is written directly.
  void write(const std::function<void(const std::string& temp_path)>& fill) const;
  // The same for text: fill writes to a stream.
  void write_text(const std::function<void(std::ostream& out)>& fill) const;

 private:
  void check() const;

  std::string path_, flag_;
  std::vector<std::string> reads_;
};

}  // namespace comera
