#pragma once
// Whether the process behind a worker id ("host:pid", store::default_worker_id) is gone: only
// answerable for workers on this host; others are judged by their heartbeat.
#include <string>

namespace comera::sweep {

// True when the worker ran on this host and no process has its pid any more.
bool local_worker_gone(const std::string& worker);

}  // namespace comera::sweep
