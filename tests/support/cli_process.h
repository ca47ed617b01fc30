#pragma once
// Runs the comera CLI (its path in env COMERA_CLI, set by ctest) as a real process: to the end
// capturing its output, or in the background to be killed or waited for.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

extern char** environ;

namespace comera::testing {

// The CLI's path, or "" when ctest did not set COMERA_CLI.
inline std::string cli_path() {
  const char* cli = std::getenv("COMERA_CLI");
  return cli ? cli : "";
}

struct CliResult {
  int status = -1;  // exit status; -1 when it did not exit normally
  std::string output;  // standard output and error together
};

// Runs `comera ARGS` through the shell and waits for it.
inline CliResult run_cli(const std::string& args) {
  CliResult result;
  FILE* pipe = popen((cli_path() + " " + args + " 2>&1").c_str(), "r");
  if (!pipe) return result;
  char buf[512];
  while (fgets(buf, sizeof buf, pipe)) result.output += buf;
  const int status = pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

// Starts `comera ARGS...` (no shell) with its output going to `log`; returns the pid.
inline pid_t spawn_cli(const std::vector<std::string>& args, const std::string& log) {
  std::vector<std::string> argv = {cli_path()};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> raw;
  for (auto& a : argv) raw.push_back(a.data());
  raw.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = -1;
  if (posix_spawn(&pid, raw[0], &actions, nullptr, raw.data(), environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

// Waits for a spawned process; its exit status, or -1 when it was killed by a signal.
inline int wait_cli(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace comera::testing
