#include "search/store/worker_id.h"

#include <unistd.h>

#include <array>
#include <fstream>
#include <sstream>

namespace comera::store {

namespace {

// A whole decimal number, or nullopt.
std::optional<uint64_t> number(const std::string& text) {
  if (text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::stoull(text);
}

}  // namespace

std::string host_name() {
  std::array<char, 256> host{};
  gethostname(host.data(), host.size() - 1);
  return host.data();
}

std::optional<uint64_t> process_start_time(int64_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return std::nullopt;
  // "pid (command) state ppid ...": the command may hold spaces and parentheses.
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(stat.substr(close + 1));
  std::string state, field;
  fields >> state;
  if (state == "Z" || state == "X") return std::nullopt;
  for (int i = 4; i <= 22 && fields >> field; ++i)
    if (i == 22) return number(field);
  return std::nullopt;
}

std::string default_worker_id() {
  const auto start = process_start_time(getpid());
  return host_name() + ":" + std::to_string(getpid()) +
         (start ? ":" + std::to_string(*start) : std::string());
}

std::optional<WorkerId> parse_worker_id(const std::string& worker) {
  // From the right: host names hold no colons, but keep whatever precedes the numbers.
  const auto last = worker.rfind(':');
  if (last == std::string::npos || last == 0) return std::nullopt;
  const auto tail = number(worker.substr(last + 1));
  if (!tail) return std::nullopt;
  const auto before = worker.rfind(':', last - 1);
  if (before != std::string::npos && before > 0) {
    if (const auto pid = number(worker.substr(before + 1, last - before - 1)); pid && *pid > 0)
      return WorkerId{worker.substr(0, before), static_cast<int64_t>(*pid), *tail};
  }
  if (*tail == 0) return std::nullopt;
  return WorkerId{worker.substr(0, last), static_cast<int64_t>(*tail), std::nullopt};
}

}  // namespace comera::store
