#pragma once
// Whether the process behind a worker id (store/worker_id.h) is gone. Only workers of this host
// can be looked up; the trials of others are judged by their heartbeat.
#include <string>

namespace comera::sweep {

// True when the worker ran on this host and its process is gone: no process has its pid, or the
// one that has it started at another time (the pid was reused).
bool local_worker_gone(const std::string& worker);

// True when the worker is a process of this host with a known start time: its trial lives as
// long as that process, however old its heartbeat.
bool judged_by_process(const std::string& worker);

}  // namespace comera::sweep
