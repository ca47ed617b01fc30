#pragma once
// Who runs a trial: "host:pid:start", where start is the process's start time (clock ticks after
// boot, field 22 of /proc/<pid>/stat), so that a later process given the same pid is not taken
// for the worker. Older databases hold "host:pid"; `comera train` runs have their own ids.
#include <cstdint>
#include <optional>
#include <string>

namespace comera::store {

struct WorkerId {
  std::string host;
  int64_t pid = 0;
  std::optional<uint64_t> start;  // absent in the older "host:pid" form
};

// This process's id ("host:pid" where /proc is not there to give a start time).
std::string default_worker_id();

// nullopt for ids that name no process ("host:train:<checkpoint>", anything else).
std::optional<WorkerId> parse_worker_id(const std::string& worker);

// This machine's host name, as worker ids hold it.
std::string host_name();

// The start time of a live process of this machine; nullopt when no such process is running (or
// it is a zombie), or /proc cannot tell.
std::optional<uint64_t> process_start_time(int64_t pid);

}  // namespace comera::store
