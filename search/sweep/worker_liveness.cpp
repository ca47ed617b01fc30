#include "search/sweep/worker_liveness.h"

#include <signal.h>
#include <unistd.h>

#include <array>
#include <cerrno>

namespace comera::sweep {

bool local_worker_gone(const std::string& worker) {
  const auto colon = worker.rfind(':');
  if (colon == std::string::npos) return false;
  std::array<char, 256> host{};
  gethostname(host.data(), host.size() - 1);
  if (worker.substr(0, colon) != host.data()) return false;
  try {
    size_t used = 0;
    const long pid = std::stol(worker.substr(colon + 1), &used);
    if (used != worker.size() - colon - 1 || pid <= 0) return false;
    // Signal 0 checks existence only; EPERM means it exists under another user.
    return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
  } catch (const std::logic_error&) {
    return false;
  }
}

}  // namespace comera::sweep
