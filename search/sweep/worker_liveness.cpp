#include "search/sweep/worker_liveness.h"

#include "search/store/worker_id.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>

namespace comera::sweep {

namespace {

// The worker as a process of this host; nullopt for workers elsewhere and ids naming no process.
std::optional<store::WorkerId> local_process(const std::string& worker) {
  auto id = store::parse_worker_id(worker);
  if (!id || id->host != store::host_name()) return std::nullopt;
  return id;
}

bool start_times_readable() { return store::process_start_time(getpid()).has_value(); }

}  // namespace

bool local_worker_gone(const std::string& worker) {
  const auto id = local_process(worker);
  if (!id) return false;
  if (id->start && start_times_readable()) {
    const auto start = store::process_start_time(id->pid);
    return !start || *start != *id->start;
  }
  // Only a pid: only its absence tells. Signal 0 checks existence; EPERM means another user's.
  return ::kill(static_cast<pid_t>(id->pid), 0) != 0 && errno == ESRCH;
}

bool judged_by_process(const std::string& worker) {
  const auto id = local_process(worker);
  return id && id->start && start_times_readable();
}

}  // namespace comera::sweep
