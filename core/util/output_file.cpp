#include "core/util/output_file.h"

#include "core/util/error.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace comera {

namespace fs = std::filesystem;

namespace {

// Resolved as far as it exists ("..", links), absolute.
fs::path resolved(const fs::path& p) {
  std::error_code error;
  const fs::path full = fs::weakly_canonical(fs::absolute(p), error);
  return error ? fs::absolute(p).lexically_normal() : full;
}

// `path` lies inside `folder` ("dir/": the trailing '/' is dropped first).
bool inside(const fs::path& path, std::string folder) {
  while (folder.size() > 1 && folder.back() == '/') folder.pop_back();
  const auto p = resolved(path), f = resolved(folder);
  auto b = p.begin();
  for (auto a = f.begin(); a != f.end(); ++a, ++b)
    if (b == p.end() || *a != *b) return false;
  return b != p.end();
}

// Both exist: the same file (hard links, symbolic links, "..", bind mounts all count). Otherwise
// the same path once resolved as far as it exists.
bool same_file(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) return fs::equivalent(a, b, ec);
  return resolved(a) == resolved(b);
}

bool is_sqlite_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  char header[16] = {};
  return in.read(header, sizeof header) && std::memcmp(header, "SQLite format 3", 16) == 0;
}

// A name no other writer uses: ".NAME.tmp-PID-N" in the output's folder, created empty.
std::string create_temp_beside(const fs::path& target) {
  static std::atomic<unsigned> counter{0};
  for (;;) {
    const fs::path temp = target.parent_path() / ("." + target.filename().string() + ".tmp-" +
                                                  std::to_string(getpid()) + "-" +
                                                  std::to_string(counter++));
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      ::close(fd);
      return temp.string();
    }
    if (errno != EEXIST)
      throw Error("cannot write in " + target.parent_path().string() + " (" +
                  std::strerror(errno) + "): check that the folder is writable");
  }
}

}  // namespace

OutputFile::OutputFile(std::string path, std::string flag, std::vector<std::string> reads)
    : path_(std::move(path)), flag_(std::move(flag)), reads_(std::move(reads)) {
  check();
}

void OutputFile::require_distinct(const OutputFile& other) const {
  if (same_file(path_, other.path_))
    throw Error(flag_ + " " + path_ + " and " + other.flag_ + " " + other.path_ +
                " name the same file, so one would replace the other: give each its own file name");
}

void OutputFile::check() const {
  const std::string named = flag_ + " " + path_;
  if (path_.empty()) throw Error(flag_ + " needs a file name");
  if (fs::is_directory(path_)) throw Error(named + " is a folder: give " + flag_ + " a file name");
  for (const auto& read : reads_) {
    if (read.empty()) continue;  // an optional input not given
    if (read.back() == '/') {
      if (inside(path_, read))
        throw Error(named + " is inside " + read + ", a folder this command reads: give " + flag_ +
                    " a file name outside it (nothing was written)");
      continue;
    }
    for (const char* side : {"", "-wal", "-shm", "-journal"})
      if (same_file(path_, read + side))
        throw Error(named + " is " + read + side + ", which this command reads: give " + flag_ +
                    " another file name (nothing was written)");
  }
  if (fs::is_regular_file(path_) && is_sqlite_file(path_))
    throw Error(named + " is a SQLite database (results?) that this output would replace: give " +
                flag_ + " another file name, or delete the file first if it is no longer needed");
}

void OutputFile::write(const std::function<void(const std::string&)>& fill) const {
  check();
  if (fs::exists(path_) && !fs::is_regular_file(path_)) {
    fill(path_);
    return;
  }
  // Write through a symbolic link to its file, keeping the link.
  const fs::path target =
      fs::is_symlink(path_) && fs::exists(path_) ? fs::canonical(path_) : fs::path(path_);
  const fs::path folder = fs::absolute(target).parent_path();
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (ec)
    throw Error("cannot create the folder " + folder.string() + " for " + flag_ + " " + path_ +
                " (" + ec.message() + ")");
  const std::string temp = create_temp_beside(fs::absolute(target));
  try {
    fill(temp);
    if (std::rename(temp.c_str(), target.c_str()) != 0)
      throw Error("cannot put " + flag_ + " " + path_ + " in place (" + std::strerror(errno) +
                  "): check that its folder is writable");
  } catch (...) {
    fs::remove(temp, ec);
    throw;
  }
}

void OutputFile::write_text(const std::function<void(std::ostream&)>& fill) const {
  write([&](const std::string& file) {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    fill(out);
    out.close();
    if (!out)
      throw Error("cannot write " + flag_ + " " + path_ +
                  ": check that the folder is writable and the disk has room");
  });
}

}  // namespace comera
