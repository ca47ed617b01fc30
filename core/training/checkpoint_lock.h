#pragma once
// Exclusive use of a checkpoint for the life of a run: `<checkpoint>.lock`, held with flock(2)
// (released by the kernel when the process dies, so a killed run never leaves it stale) and
// naming its holder. Taking it also proves, before any training, that the checkpoint's folder
// can be written.
#include <string>

namespace comera {

class CheckpointLock {
 public:
  // Creates the folder if needed. Throws comera::Error naming the folder when it cannot be
  // written, and naming the holder (process, host, since when) when another run holds the lock.
  explicit CheckpointLock(const std::string& checkpoint);
  ~CheckpointLock();
  CheckpointLock(const CheckpointLock&) = delete;
  CheckpointLock& operator=(const CheckpointLock&) = delete;

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace comera
