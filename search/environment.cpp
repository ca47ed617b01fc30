#include "search/environment.h"

#include "comera_build_stamp.h"
#include "core/util/accelerator.h"
#include "core/util/device.h"

#include <ATen/Parallel.h>
#include <torch/version.h>

#include <unistd.h>

#include <array>

namespace comera {

std::string Environment::fingerprint() const {
  return device + "|threads=" + std::to_string(threads) + "|torch=" + torch_version;
}

std::string Environment::describe() const {
  return device + ", " + std::to_string(threads) + (threads == 1 ? " thread" : " threads");
}

nlohmann::json Environment::to_json() const {
  return {{"git_commit", git_commit}, {"git_dirty", git_dirty}, {"torch_version", torch_version},
          {"device", device},         {"threads", threads},     {"host", host}};
}

Environment current_environment(const std::string& device) {
  Environment env;
  // Stamped when the binary was built (cmake/stamp_commit.cmake): what ran, wherever it runs.
  env.git_commit = COMERA_BUILD_COMMIT;
  env.git_dirty = COMERA_BUILD_DIRTY != 0;
  env.torch_version = TORCH_VERSION;
  // A CPU-only build can only name the GPU it was asked for.
  env.device = device == "cpu" || built_with_cuda() ? device_description(parse_device(device)) : device;
  env.threads = at::get_num_threads();
  std::array<char, 256> host{};
  gethostname(host.data(), host.size() - 1);
  env.host = host.data();
  return env;
}

}  // namespace comera
