#include "search/cli/rank_launcher.h"

#include "core/distributed/world.h"
#include "core/util/error.h"
#include "core/util/process.h"
#include "search/cli/stop_signals.h"

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <optional>
#include <thread>

namespace comera::cli {

namespace {

using Clock = std::chrono::steady_clock;

const char* const kLauncherVariable = "COMERA_LAUNCHER_PID";

bool is_option(const std::string& arg, const std::string& name) {
  return arg == "--" + name || arg.rfind("--" + name + "=", 0) == 0;
}

}  // namespace

std::vector<std::string> rank_arguments(const std::vector<std::string>& argv, int threads) {
  std::vector<std::string> out;
  for (size_t i = 1; i < argv.size(); ++i) {
    const auto& a = argv[i];
    if (is_option(a, "nproc") || is_option(a, "threads")) {
      if (a.find('=') == std::string::npos) ++i;  // its value is the next word
      continue;
    }
    out.push_back(a);
  }
  out.push_back("--threads");
  out.push_back(std::to_string(threads));
  return out;
}

void stop_with_launcher() {
  const char* launcher = std::getenv(kLauncherVariable);
  if (!launcher) return;
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  // The launcher may have died before the request was in place.
  if (std::to_string(::getppid()) != launcher) std::raise(SIGTERM);
}

int launch_local_ranks(const LaunchOptions& o) {
  const auto& stop = stop_on_signals();
  const int port = free_local_port();
  std::vector<std::string> argv = {"/proc/self/exe"};
  for (auto& a : rank_arguments(o.argv, o.threads_per_rank)) argv.push_back(a);
  std::vector<pid_t> pids;
  for (int r = 0; r < o.nproc; ++r) {
    auto env = rank_environment(r, o.nproc, "127.0.0.1", port);
    env[kLauncherVariable] = std::to_string(::getpid());
    pids.push_back(start_child(argv, env, "rank " + std::to_string(r)));
  }
  if (o.say)
    o.say("started " + std::to_string(o.nproc) + " ranks on 127.0.0.1:" + std::to_string(port) +
          ", " + std::to_string(o.threads_per_rank) + " thread(s) each; rank 0 reports");
  std::vector<std::optional<int>> ended(pids.size());
  std::optional<int> first_failed;
  std::optional<Clock::time_point> failed_at;
  bool forwarded = false, stopped = false;
  for (size_t running = pids.size(); running > 0;) {
    for (size_t r = 0; r < pids.size(); ++r) {
      if (ended[r]) continue;
      if (const auto status = poll_process(pids[r])) {
        ended[r] = *status;
        --running;
        const bool ok = WIFEXITED(*status) && WEXITSTATUS(*status) == 0;
        if (!ok && r == 0 && o.on_root_failed) o.on_root_failed(describe_status(*status));
        if (!ok && !first_failed) {
          first_failed = static_cast<int>(r);
          failed_at = Clock::now();
          if (o.say && !stopped)
            o.say("rank " + std::to_string(r) + " (pid " + std::to_string(pids[r]) + ") ended: " +
                  describe_status(*status) +
                  (running > 0 ? "; the other ranks stop within " + std::to_string(o.grace.count()) + " s"
                               : std::string()));
        }
      }
    }
    if (stop.load() && !forwarded) {
      forwarded = true;
      for (size_t r = 0; r < pids.size(); ++r)
        if (!ended[r]) ::kill(pids[r], stop_signal() ? stop_signal() : SIGTERM);
    }
    if (failed_at && !stopped && Clock::now() - *failed_at > o.grace) {
      stopped = true;
      for (size_t r = 0; r < pids.size(); ++r)
        if (!ended[r]) ::kill(pids[r], SIGKILL);
    }
    if (running > 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  auto code = [](int raw) { return WIFEXITED(raw) ? WEXITSTATUS(raw) : 1; };
  if (code(*ended[0]) != 0) return code(*ended[0]);
  return first_failed ? code(*ended[static_cast<size_t>(*first_failed)]) : 0;
}

}  // namespace comera::cli
