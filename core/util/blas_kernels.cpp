#include "core/util/blas_kernels.h"

#include <dlfcn.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <vector>

namespace comera {

namespace {

constexpr const char* kCoreVariable = "OPENBLAS_CORETYPE";
// Set beside OPENBLAS_CORETYPE when comera chose it, so reports can tell it from a user's.
constexpr const char* kChosenVariable = "COMERA_OPENBLAS_CORETYPE";
constexpr const char* kBestCore = "SkylakeX";
// OpenBLAS's kernel sets that use AVX-512 (Cooperlake and SapphireRapids: SkylakeX's kernels
// plus bfloat16 ones).
constexpr std::array<const char*, 3> kAvx512Cores{"SkylakeX", "Cooperlake", "SapphireRapids"};

bool cpu_has_avx512() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
}

// Looked up at run time: LibTorch may be built against another BLAS, which lacks it.
std::string openblas_core() {
  using CoreName = char* (*)();
  const auto corename = reinterpret_cast<CoreName>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  const char* name = corename ? corename() : nullptr;
  return name ? name : "";
}

std::vector<std::string> own_arguments() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  for (size_t start = 0; start < all.size();) {
    const size_t end = all.find('\0', start);
    args.push_back(all.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return args;
}

}  // namespace

std::string BlasKernels::describe() const {
  return core.empty() ? "not OpenBLAS" : "OpenBLAS " + core + " (chosen by " + chosen_by + ")";
}

BlasKernels blas_kernels() {
  BlasKernels k;
  k.core = openblas_core();
  const char* set = std::getenv(kCoreVariable);
  const char* chosen = std::getenv(kChosenVariable);
  k.chosen_by = !set ? "OpenBLAS" : chosen && std::string(chosen) == set ? "comera" : "user";
  return k;
}

std::string better_openblas_core(bool avx512, const std::string& current_core) {
  if (!avx512 || current_core.empty()) return "";
  for (const char* core : kAvx512Cores)
    if (current_core == core) return "";
  return kBestCore;
}

void use_best_blas_kernels() {
  if (std::getenv(kCoreVariable)) return;
  if (const char* off = std::getenv("COMERA_BLAS_SWITCH"); off && std::string(off) == "off") return;
  const auto core = better_openblas_core(cpu_has_avx512(), openblas_core());
  if (core.empty()) return;
  const auto args = own_arguments();
  if (args.empty()) return;
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  setenv(kCoreVariable, core.c_str(), 1);
  setenv(kChosenVariable, core.c_str(), 1);
  execv("/proc/self/exe", argv.data());
  unsetenv(kCoreVariable);  // exec failed: carry on with OpenBLAS's own choice
  unsetenv(kChosenVariable);
}

}  // namespace comera
