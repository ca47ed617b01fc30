#include "core/data/data_dirs.h"

#include "core/util/home_dir.h"

#include <filesystem>

namespace comera {

std::string default_wordnet_dir() { return home_dir() + "/data/wordnet"; }
std::string default_pairs_dir() { return home_dir() + "/data/pairs/pystdlib"; }
std::string default_code_corpus_dir() { return home_dir() + "/data/code-corpus"; }

std::string data_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  const fs::path given = dir;
  if (dir.empty() || given.is_absolute() || fs::exists(given)) return dir;
  const auto home = fs::path(home_dir()) / given;
  return fs::exists(home) ? home.string() : dir;
}

}  // namespace comera
