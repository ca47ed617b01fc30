#pragma once
// `comera train --nproc N`: the local launcher (what torchrun's standalone mode does). Starts N
// ranks of the same command on this host with torchrun's variables and a free port on
// 127.0.0.1, passes a stop signal on to them once, and when a rank fails gives the others
// `grace` to end on their own (each names the lost rank) before stopping them. Ranks stop when
// the launcher dies, however it dies.
#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace comera::cli {

struct LaunchOptions {
  std::vector<std::string> argv;  // program, command name and options (the program is ignored)
  int nproc = 2;
  int threads_per_rank = 1;       // each rank's --threads
  std::chrono::seconds grace{30};
  std::function<void(const std::string&)> say;
  // Called once rank 0 has ended otherwise than with exit status 0, with its wait status in
  // words: it holds the run's record, which it may have left running (killed by a signal).
  std::function<void(const std::string&)> on_root_failed;
};

// In a process another comera process started to supervise (COMERA_LAUNCHER_PID: a rank by its
// launcher, a launcher by its sweep worker): asks for SIGTERM when that one dies, so a killed
// parent leaves nothing running on as an orphan (it stops resumably).
void stop_with_launcher();

// The exit code of the run: 0 when every rank succeeded, else rank 0's if it failed, else the
// first failed rank's (1 for a rank killed by a signal other than ours).
int launch_local_ranks(const LaunchOptions& options);

// `argv` without its --nproc option and with --threads set to `threads`.
std::vector<std::string> rank_arguments(const std::vector<std::string>& argv, int threads);

}  // namespace comera::cli
