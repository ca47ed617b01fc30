#include "core/util/process.h"

#include "core/util/error.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <utility>

extern char** environ;

namespace comera {
namespace {

// Owns a descriptor and closes it once. Every descriptor here is close-on-exec, so a child
// gets only what its file actions hand it, even when another thread spawns at the same time.
struct Fd {
  int fd = -1;
  explicit Fd(int f = -1) : fd(f) {}
  Fd(Fd&& other) noexcept : fd(other.release()) {}
  Fd& operator=(Fd&&) = delete;
  ~Fd() { reset(); }
  int release() { return std::exchange(fd, -1); }
  void reset() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

std::string os_error() { return std::strerror(errno); }

// Standard input comes from a file, not a pipe: the child can never block us by writing before
// it has read all of its input.
Fd input_file(const std::string& input, const std::string& what) {
  std::string path = (std::filesystem::temp_directory_path() / "comera-input-XXXXXX").string();
  Fd in(::mkostemp(path.data(), O_CLOEXEC));
  if (in.fd < 0) throw Error(what + ": cannot create a temporary file: " + os_error());
  const bool written = ::write(in.fd, input.data(), input.size()) == static_cast<ssize_t>(input.size());
  ::unlink(path.c_str());
  if (!written || ::lseek(in.fd, 0, SEEK_SET) != 0)
    throw Error(what + ": cannot write its input to a temporary file");
  return in;
}

struct Pipe {
  Fd read, write;
};

Pipe make_pipe(const std::string& what) {
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0) throw Error(what + ": cannot create a pipe: " + os_error());
  return {Fd(ends[0]), Fd(ends[1])};
}

pid_t spawn(const std::vector<std::string>& argv, int in, int out, ErrorOutput errors,
            const std::string& what, char* const* envp = environ,
            const posix_spawnattr_t* attributes = nullptr) {
  if (argv.empty()) throw Error(what + ": no program to run");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in, STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out, STDOUT_FILENO);
  if (errors == ErrorOutput::Merge) posix_spawn_file_actions_adddup2(&actions, out, STDERR_FILENO);
  if (errors == ErrorOutput::Discard)
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = ::posix_spawnp(&pid, args[0], &actions, attributes, args.data(), envp);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) throw Error(what + ": cannot run '" + argv[0] + "': " + std::strerror(spawned));
  return pid;
}

int raw_wait(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return status;
}

int exit_status(int raw) { return raw >= 0 && WIFEXITED(raw) ? WEXITSTATUS(raw) : -1; }

}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv, const std::string& what,
                          ErrorOutput errors, const std::string& input) {
  const Fd in = input_file(input, what);
  Pipe out = make_pipe(what);
  const pid_t pid = spawn(argv, in.fd, out.write.fd, errors, what);
  out.write.reset();
  ProcessResult result;
  char buffer[4096];
  for (ssize_t n; (n = ::read(out.read.fd, buffer, sizeof buffer)) != 0;) {
    if (n > 0) result.output.append(buffer, static_cast<size_t>(n));
    else if (errno != EINTR) break;
  }
  out.read.reset();  // a child still writing gets SIGPIPE rather than blocking the wait
  result.status = exit_status(raw_wait(pid));
  return result;
}

void run_lines(const std::vector<std::string>& argv, const std::string& input,
               const std::function<void(const std::string& line)>& on_line,
               const std::string& what) {
  const Fd in = input_file(input, what);
  Pipe out = make_pipe(what);
  const pid_t pid = spawn(argv, in.fd, out.write.fd, ErrorOutput::Inherit, what);
  out.write.reset();
  std::FILE* stream = ::fdopen(out.read.release(), "r");
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
    raw_wait(pid);
    throw;
  }
  std::fclose(stream);
  const int status = raw_wait(pid);
  if (exit_status(status) != 0)
    throw Error(what + ": '" + argv[0] + "' failed (" +
                (status >= 0 && WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                                                  : std::string("killed by a signal")) +
                "); its messages are above");
}

pid_t start_process(const std::vector<std::string>& argv, const std::string& log_file,
                    const std::string& what) {
  const Fd in = input_file("", what);
  const Fd log(::open(log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (log.fd < 0) throw Error(what + ": cannot write " + log_file + ": " + os_error());
  return spawn(argv, in.fd, log.fd, ErrorOutput::Merge, what);
}

int wait_process(pid_t pid) { return exit_status(raw_wait(pid)); }

pid_t start_child(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
                  const std::string& what) {
  std::vector<std::string> vars;
  for (char** e = environ; e && *e; ++e) {
    const std::string item(*e);
    if (!env.count(item.substr(0, item.find('=')))) vars.push_back(item);
  }
  for (const auto& [name, value] : env) vars.push_back(name + "=" + value);
  std::vector<char*> envp;
  for (auto& v : vars) envp.push_back(v.data());
  envp.push_back(nullptr);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  try {
    const pid_t pid = spawn(argv, STDIN_FILENO, STDOUT_FILENO, ErrorOutput::Inherit, what,
                            envp.data(), &attributes);
    posix_spawnattr_destroy(&attributes);
    return pid;
  } catch (...) {
    posix_spawnattr_destroy(&attributes);
    throw;
  }
}

std::optional<int> poll_process(pid_t pid) {
  int status = 0;
  pid_t done;
  while ((done = ::waitpid(pid, &status, WNOHANG)) < 0)
    if (errno != EINTR) return -1;
  if (done == 0) return std::nullopt;
  return status;
}

std::string describe_status(int raw) {
  if (raw >= 0 && WIFEXITED(raw)) return "exit status " + std::to_string(WEXITSTATUS(raw));
  if (raw >= 0 && WIFSIGNALED(raw))
    return "killed by signal " + std::to_string(WTERMSIG(raw)) + " (" + ::strsignal(WTERMSIG(raw)) + ")";
  return "ended (status unknown)";
}

}  // namespace comera
