#pragma once
// A fresh folder under the system temp dir, removed with everything in it at scope exit.
#include "core/util/remove_tree.h"

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace comera::testing {

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "comera_test_XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed for " + pattern);
    path_ = pattern;
  }
  ~TempDir() { remove_tree(path_.string()); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace comera::testing
