#include "search/environment.h"

#include "comera_build_stamp.h"
#include "core/util/accelerator.h"
#include "core/util/blas_kernels.h"
#include "core/util/device.h"

#include <ATen/Parallel.h>
#include <torch/version.h>

#include <unistd.h>

#include <array>
#include <fstream>

namespace comera {

namespace {

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

std::string blas_suffix() {
  const auto blas = blas_kernels();
  return blas.core.empty() ? "" : ", OpenBLAS " + blas.core;
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
  // Stamped when the binary was built (cmake/stamp_commit.cmake): what ran, wherever it runs.
  env.git_commit = COMERA_BUILD_COMMIT;
  env.git_dirty = COMERA_BUILD_DIRTY != 0;
  env.torch_version = TORCH_VERSION;
  // The BLAS kernels are part of the CPU's identity here: they change every dense GEMM's speed.
  // A GPU by its name and CUDA versions (a CPU-only build can only name what it was asked for).
  env.device = device == "cpu" ? cpu_model() + blas_suffix()
               : built_with_cuda() ? device_description(parse_device(device))
                                   : device;
  env.threads = at::get_num_threads();
  std::array<char, 256> host{};
  gethostname(host.data(), host.size() - 1);
  env.host = host.data();
  return env;
}

}  // namespace comera
