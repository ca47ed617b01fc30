#include "core/util/home_dir.h"

#include "core/util/source_dir.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace comera {

std::string home_dir() {
  if (const char* home = std::getenv("COMERA_HOME"); home && *home) return home;
  std::error_code error;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    const auto installed = exe.parent_path().parent_path() / "share" / "comera";
    if (std::filesystem::is_directory(installed / "experiments", error)) return installed.string();
  }
  return source_dir();
}

std::string home_path(const std::string& path) {
  const std::filesystem::path given = path;
  if (path.empty() || given.is_absolute() || std::filesystem::exists(given)) return path;
  const auto home = std::filesystem::path(home_dir()) / given;
  return std::filesystem::exists(home) ? home.string() : path;
}

}  // namespace comera
