#pragma once
// A claimed trial's heartbeat, written from a thread and a database connection of its own: it
// goes on through evaluation and checkpoints as through steps (a long evaluation never looks
// like a dead worker), and a busy database never stalls a step. When the trial is no longer
// this worker's (declared stale and claimed by another), it sets `lost`, and the run stops.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace comera {

class ClaimHeartbeat {
 public:
  // Beats every `interval`, the first one `interval` after construction.
  ClaimHeartbeat(std::string db_path, int64_t trial_id, std::string worker, std::chrono::milliseconds interval,
                 std::atomic<bool>* lost);
  ~ClaimHeartbeat();  // stops the thread
  ClaimHeartbeat(const ClaimHeartbeat&) = delete;
  ClaimHeartbeat& operator=(const ClaimHeartbeat&) = delete;

 private:
  void beat_until_done();

  std::string db_path_, worker_;
  int64_t trial_id_;
  std::chrono::milliseconds interval_;
  std::atomic<bool>* lost_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace comera
