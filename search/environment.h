#pragma once
// Where and with what a result was measured: recorded with every trial and kernel choice, so
// results from another machine or library version are never mixed up.
#include <nlohmann/json.hpp>

#include <string>

namespace comera {

struct Environment {
  std::string git_commit;   // "unknown" outside a git checkout
  bool git_dirty = false;
  std::string torch_version;
  std::string device;       // device_description(): the CPU and its BLAS kernels, or the GPU
  int threads = 1;
  std::string host;

  // What must match for a measured kernel time to be reused (no git, no host name).
  std::string fingerprint() const;
  // "AMD EPYC 9654 96-Core Processor, OpenBLAS Haswell, 2 threads": what a figure was measured on.
  std::string describe() const;
  nlohmann::json to_json() const;
};

// Reads the current process's environment (git state of the source tree it was built from).
Environment current_environment(const std::string& device = "cpu");

}  // namespace comera
