#pragma once
// Running helper programs (no shell): the one place that starts processes. Their output read
// line by line as it comes, or whole with the exit status, or a program left running in the
// background with its output in a file.
#include <sys/types.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace comera {

// Where a child's standard error goes: to ours, nowhere, or into the output captured with its
// standard output.
enum class ErrorOutput { Inherit, Discard, Merge };

struct ProcessResult {
  int status = -1;     // exit status; -1 when a signal ended it
  std::string output;  // standard output (and error, with ErrorOutput::Merge)
};

// Runs argv[0] (looked up on PATH) with `input` as its standard input, to its end. A non-zero
// exit status is the caller's to judge; throws comera::Error, naming `what`, only when the
// program cannot start.
ProcessResult run_process(const std::vector<std::string>& argv, const std::string& what,
                          ErrorOutput errors = ErrorOutput::Inherit, const std::string& input = "");

// Runs argv[0] (looked up on PATH) with `input` as its standard input and calls on_line for each
// line of its standard output; its standard error goes to ours. Throws comera::Error when it
// cannot start or exits non-zero, naming `what` (e.g. "python3 reading the sources").
void run_lines(const std::vector<std::string>& argv, const std::string& input,
               const std::function<void(const std::string& line)>& on_line,
               const std::string& what);

// Starts argv[0] in the background with its standard output and error going to `log_file`
// (created or emptied) and returns its process id; the caller waits for it (wait_process).
pid_t start_process(const std::vector<std::string>& argv, const std::string& log_file,
                    const std::string& what);
// Waits for a started process: its exit status, or -1 when a signal ended it.
int wait_process(pid_t pid);

// Starts argv[0] with our standard streams and environment, `env` added or replacing, in a
// process group of its own (a terminal's Ctrl-C then reaches only us, and we pass it on once).
pid_t start_child(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
                  const std::string& what);
// Without blocking: a started process's raw wait status once it has ended, nullopt while it runs.
std::optional<int> poll_process(pid_t pid);
// A raw wait status in words: "exit status 1", "killed by signal 9 (Killed)".
std::string describe_status(int raw);

}  // namespace comera
