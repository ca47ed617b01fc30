// How the binaries are linked: the C++ runtime's own functions are the ones called. pip's
// LibTorch 2.x exports copies of newer libstdc++ symbols; before the C++ runtime was linked
// first, std::filesystem::remove_all resolved to libtorch.so's copy, which jumped to address 0.
#include "tests/support/catch.h"

#include <dlfcn.h>

#include <filesystem>
#include <string>
#include <system_error>

TEST_CASE("std::filesystem calls reach the C++ runtime, not a copy inside LibTorch", "[linkage]") {
  using RemoveAll = std::uintmax_t (*)(const std::filesystem::path&, std::error_code&);
  const RemoveAll f = &std::filesystem::remove_all;
  Dl_info info{};
  REQUIRE(dladdr(reinterpret_cast<void*>(f), &info) != 0);
  REQUIRE(info.dli_fname != nullptr);
  INFO("remove_all is defined in " << info.dli_fname);
  CHECK(std::string(info.dli_fname).find("libstdc++") != std::string::npos);
}
