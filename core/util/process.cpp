#include "core/util/process.h"

#include "core/util/error.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

extern char** environ;

namespace comera {
namespace {

// Closes a descriptor once, on every path out.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

void run_lines(const std::vector<std::string>& argv, const std::string& input,
               const std::function<void(const std::string& line)>& on_line,
               const std::string& what) {
  // Standard input comes from a file, not a pipe: the child can never block us by writing
  // before it has read all of it.
  std::string input_path =
      (std::filesystem::temp_directory_path() / "comera-input-XXXXXX").string();
  Fd in{::mkstemp(input_path.data())};
  if (in.fd < 0) throw Error(what + ": cannot create a temporary file: " + std::strerror(errno));
  const bool written = ::write(in.fd, input.data(), input.size()) ==
                       static_cast<ssize_t>(input.size());
  ::unlink(input_path.c_str());
  if (!written || ::lseek(in.fd, 0, SEEK_SET) != 0)
    throw Error(what + ": cannot write its input to a temporary file");

  int out[2];
  if (::pipe(out) != 0) throw Error(what + ": cannot create a pipe: " + std::strerror(errno));
  Fd read_end{out[0]}, write_end{out[1]};

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in.fd, STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, write_end.fd, STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, read_end.fd);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0)
    throw Error(what + ": cannot run '" + argv[0] + "': " + std::strerror(spawned));
  ::close(write_end.fd);
  write_end.fd = -1;

  std::FILE* stream = ::fdopen(read_end.fd, "r");
  read_end.fd = -1;  // owned by the stream now
  auto wait = [pid] {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return status;
  };
  try {
    std::string line;
    for (int c; (c = std::fgetc(stream)) != EOF;) {
      if (c != '\n') {
        line += static_cast<char>(c);
        continue;
      }
      on_line(line);
      line.clear();
    }
    if (!line.empty()) on_line(line);
  } catch (...) {  // the caller gave up: stop the child and reap it
    ::kill(pid, SIGTERM);
    std::fclose(stream);
    wait();
    throw;
  }
  std::fclose(stream);
  const int status = wait();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw Error(what + ": '" + argv[0] + "' failed (" +
                (WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                                   : std::string("killed by a signal")) +
                "); its messages are above");
}

}  // namespace comera
