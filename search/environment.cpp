#include "search/environment.h"

#include <ATen/Parallel.h>
#include <torch/version.h>

#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <memory>

namespace comera {

namespace {

std::string run_capture(const std::string& cmd) {
  std::array<char, 256> buf{};
  std::string out;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  if (!pipe) return out;
  while (fgets(buf.data(), buf.size(), pipe.get())) out += buf.data();
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      auto pos = line.find(':');
      if (pos != std::string::npos) return line.substr(pos + 2);
    }
  return "unknown cpu";
}

}  // namespace

std::string Environment::fingerprint() const {
  return device + "|threads=" + std::to_string(threads) + "|torch=" + torch_version;
}

nlohmann::json Environment::to_json() const {
  return {{"git_commit", git_commit}, {"git_dirty", git_dirty}, {"torch_version", torch_version},
          {"device", device},         {"threads", threads},     {"host", host}};
}

Environment current_environment(const std::string& device) {
  Environment env;
  const std::string git = std::string("git -C '") + COMERA_SOURCE_DIR + "' ";
  env.git_commit = run_capture(git + "rev-parse HEAD 2>/dev/null");
  if (env.git_commit.empty()) env.git_commit = "unknown";
  env.git_dirty = !run_capture(git + "status --porcelain --untracked-files=no 2>/dev/null").empty();
  env.torch_version = TORCH_VERSION;
  env.device = device == "cpu" ? cpu_model() : device;
  env.threads = at::get_num_threads();
  std::array<char, 256> host{};
  gethostname(host.data(), host.size() - 1);
  env.host = host.data();
  return env;
}

}  // namespace comera
