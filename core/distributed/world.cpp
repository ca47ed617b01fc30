#include "core/distributed/world.h"

#include "core/util/error.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

extern char** environ;

namespace comera {

namespace {

const std::string* find(const EnvironmentVars& env, const std::string& name) {
  const auto it = env.find(name);
  return it == env.end() || it->second.empty() ? nullptr : &it->second;
}

int number(const std::string& name, const std::string& text, int lo, int hi) {
  size_t used = 0;
  long value = 0;
  try {
    value = std::stol(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || value < lo || value > hi)
    throw Error("environment variable " + name + "=" + text + ": give a whole number from " +
                std::to_string(lo) + " to " + std::to_string(hi) +
                " (set by torchrun, srun or comera train --nproc; unset it for a single process)");
  return static_cast<int>(value);
}

// The first of `names` that is set, read as a number in [lo, hi]; `fallback` when none is.
int first_number(const EnvironmentVars& env, std::initializer_list<const char*> names, int lo, int hi,
                 int fallback) {
  for (const char* name : names)
    if (const auto* v = find(env, name)) return number(name, *v, lo, hi);
  return fallback;
}

}  // namespace

EnvironmentVars process_environment() {
  EnvironmentVars env;
  for (char** e = environ; e && *e; ++e) {
    const std::string item(*e);
    const auto eq = item.find('=');
    if (eq != std::string::npos) env.emplace(item.substr(0, eq), item.substr(eq + 1));
  }
  return env;
}

std::optional<World> world_from(const EnvironmentVars& env) {
  constexpr int kMaxRanks = 1 << 20;
  const bool torchrun = find(env, "WORLD_SIZE") != nullptr;
  // srun sets SLURM_NTASKS for every job step; it names a world only with MASTER_ADDR beside it.
  const bool slurm = !torchrun && find(env, "SLURM_NTASKS") && find(env, "MASTER_ADDR");
  if (!torchrun && !slurm) return std::nullopt;
  World w;
  w.size = torchrun ? number("WORLD_SIZE", *find(env, "WORLD_SIZE"), 1, kMaxRanks)
                    : number("SLURM_NTASKS", *find(env, "SLURM_NTASKS"), 1, kMaxRanks);
  if (w.size == 1) return std::nullopt;
  const char* rank_name = torchrun ? "RANK" : "SLURM_PROCID";
  if (!find(env, rank_name))
    throw Error(std::string(torchrun ? "WORLD_SIZE" : "SLURM_NTASKS") + " is " +
                std::to_string(w.size) + " but " + rank_name +
                " is not set: every process of a data-parallel run needs its rank");
  w.rank = number(rank_name, *find(env, rank_name), 0, w.size - 1);
  w.local_rank = torchrun ? first_number(env, {"LOCAL_RANK"}, 0, w.size - 1, w.rank)
                          : first_number(env, {"SLURM_LOCALID"}, 0, w.size - 1, w.rank);
  w.local_size = torchrun ? first_number(env, {"LOCAL_WORLD_SIZE"}, 1, w.size, w.size)
                          : first_number(env, {"SLURM_NTASKS_PER_NODE"}, 1, w.size, w.size);
  if (const auto* addr = find(env, "MASTER_ADDR")) w.master_addr = *addr;
  w.master_port = first_number(env, {"MASTER_PORT"}, 1, 65535, w.master_port);
  return w;
}

int free_local_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw Error("cannot open a socket to find a free port on 127.0.0.1");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof addr;
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length) == 0;
  ::close(fd);
  if (!ok)
    throw Error("cannot find a free port on 127.0.0.1 (set MASTER_PORT and launch the ranks yourself)");
  return ntohs(addr.sin_port);
}

EnvironmentVars rank_environment(int rank, int size, const std::string& master_addr, int master_port) {
  return {{"RANK", std::to_string(rank)},
          {"WORLD_SIZE", std::to_string(size)},
          {"LOCAL_RANK", std::to_string(rank)},
          {"LOCAL_WORLD_SIZE", std::to_string(size)},
          {"MASTER_ADDR", master_addr},
          {"MASTER_PORT", std::to_string(master_port)}};
}

}  // namespace comera
