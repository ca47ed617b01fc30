#pragma once
// Runs the comera CLI (its path in env COMERA_CLI, set by ctest) as a real process through
// core/util/process.h: to the end capturing its output, or in the background to be killed or
// waited for.
#include "core/util/process.h"
#include "tests/support/catch.h"

#include <sys/wait.h>

#include <cerrno>
#include <cstdlib>
#include <string>
#include <vector>

namespace comera::testing {

// The CLI's path; the test fails when COMERA_CLI is unset (ctest sets it).
inline std::string cli_path() {
  const char* cli = std::getenv("COMERA_CLI");
  if (!cli || !*cli) FAIL("COMERA_CLI is not set: run the tests through ctest, or set it to build/comera");
  return cli;
}

using CliResult = ProcessResult;  // status, and standard output and error together

// Runs `comera ARGS` and waits for it; ARGS is shell text, so tests can quote SQL and the like.
inline CliResult run_cli(const std::string& args) {
  return run_process({"/bin/sh", "-c", cli_path() + " " + args}, "comera", ErrorOutput::Merge);
}

// Starts `comera ARGS...` with its output going to `log`; returns the pid.
inline pid_t spawn_cli(const std::vector<std::string>& args, const std::string& log) {
  std::vector<std::string> argv = {cli_path()};
  argv.insert(argv.end(), args.begin(), args.end());
  return start_process(argv, log, "comera");
}

// Waits for a spawned process; its exit status, or -1 when it was killed by a signal.
inline int wait_cli(pid_t pid) { return wait_process(pid); }

// Waits until a spawned process stops itself (SIGSTOP, e.g. at COMERA_PAUSE_AT); false when it
// ended instead.
inline bool wait_until_stopped(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, WUNTRACED) < 0)
    if (errno != EINTR) return false;
  return WIFSTOPPED(status);
}

}  // namespace comera::testing
