#include "search/runs/claim_heartbeat.h"

#include "search/store/results_db.h"
#include "search/store/trial_queue.h"

namespace comera {

ClaimHeartbeat::ClaimHeartbeat(std::string db_path, int64_t trial_id, std::string worker,
                               std::chrono::milliseconds interval, std::atomic<bool>* lost)
    : db_path_(std::move(db_path)), worker_(std::move(worker)), trial_id_(trial_id), interval_(interval),
      lost_(lost), thread_([this] { beat_until_done(); }) {}

ClaimHeartbeat::~ClaimHeartbeat() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void ClaimHeartbeat::beat_until_done() {
  std::unique_ptr<store::ResultsDb> db;
  std::unique_lock<std::mutex> lock(mutex_);
  while (!wake_.wait_for(lock, interval_, [this] { return done_; })) {
    lock.unlock();
    bool mine = true;
    try {
      if (!db) db = std::make_unique<store::ResultsDb>(store::ResultsDb::open(db_path_));
      mine = store::heartbeat(*db, trial_id_, worker_);
    } catch (const std::exception&) {
      // A database busy past its timeout: the next beat tries again, well inside the staleness limit.
    }
    lock.lock();
    if (!mine) {
      lost_->store(true);
      return;
    }
  }
}

}  // namespace comera
