#pragma once
// Where this process stands in a data-parallel run, read the way torchrun sets it: RANK,
// WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT; under Slurm's srun, which
// sets none of the first four, SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID and
// SLURM_NTASKS_PER_NODE stand in (MASTER_ADDR and MASTER_PORT must still be given).
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace comera {

struct World {
  int rank = 0, size = 1;
  int local_rank = 0, local_size = 1;
  std::string master_addr = "127.0.0.1";  // where rank 0 serves the rendezvous store
  int master_port = 29500;
  bool is_root() const { return rank == 0; }
};

// The variables of a run: the environment's, or `env` in tests.
using EnvironmentVars = std::map<std::string, std::string>;
EnvironmentVars process_environment();

// The world the environment describes, or nullopt when it names none (a single process: no
// WORLD_SIZE, or WORLD_SIZE 1). A malformed or inconsistent value is an error naming the variable.
std::optional<World> world_from(const EnvironmentVars& env);

// A port free on 127.0.0.1 just now: the kernel hands one out and takes it back (torchrun picks
// its port the same way; another process may take it in the moment before rank 0 binds it).
int free_local_port();

// The variables a launcher gives rank `rank` of `size` local ranks (torchrun's names).
EnvironmentVars rank_environment(int rank, int size, const std::string& master_addr, int master_port);

}  // namespace comera
