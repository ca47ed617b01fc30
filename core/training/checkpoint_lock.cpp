#include "core/training/checkpoint_lock.h"

#include "core/util/error.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>

namespace comera {

namespace {

std::string holder_text() {
  std::array<char, 256> host{};
  gethostname(host.data(), host.size() - 1);
  const std::time_t now = std::time(nullptr);
  std::array<char, 32> when{};
  std::strftime(when.data(), when.size(), "%Y-%m-%d %H:%M:%S", std::localtime(&now));
  return "process " + std::to_string(getpid()) + " on " + host.data() + " since " + when.data();
}

}  // namespace

CheckpointLock::CheckpointLock(const std::string& checkpoint) : path_(checkpoint + ".lock") {
  const auto folder = std::filesystem::absolute(checkpoint).parent_path();
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  // A holder that ends unlinks the file: a lock taken on the unlinked file is retaken.
  for (;;) {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0)
      throw Error("cannot write checkpoints to " + folder.string() + " (" + std::strerror(errno) +
                  "); choose a writable place with --checkpoint");
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      std::array<char, 512> buf{};
      const auto n = ::pread(fd_, buf.data(), buf.size() - 1, 0);
      ::close(fd_);
      fd_ = -1;
      throw Error("checkpoint " + checkpoint + " is in use by another run (" +
                  (n > 0 ? std::string(buf.data(), static_cast<size_t>(n)) : std::string("holder unknown")) +
                  "); wait for it to end, or give this run its own --checkpoint");
    }
    struct stat held {}, named {};
    if (::fstat(fd_, &held) == 0 && ::stat(path_.c_str(), &named) == 0 && held.st_ino == named.st_ino &&
        held.st_dev == named.st_dev)
      break;
    ::close(fd_);
  }
  const auto text = holder_text();
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, text.data(), text.size(), 0) < 0)
    throw Error("cannot write " + path_ + " (" + std::strerror(errno) + ")");
}

CheckpointLock::~CheckpointLock() {
  if (fd_ < 0) return;
  // Removed while still held, so a run waiting for it never takes a lock file just unlinked.
  ::unlink(path_.c_str());
  ::close(fd_);
}

}  // namespace comera
