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
  std::string device;       // CPU model name, or GPU name
  int threads = 1;
  std::string host;

  // What must match for a measured kernel time to be reused (no git, no host name).
  std::string fingerprint() const;
  nlohmann::json to_json() const;
};

// Reads the current process's environment (git state of the source tree it was built from).
Environment current_environment(const std::string& device = "cpu");

}  // namespace comera
