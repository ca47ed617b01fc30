#include "core/util/remove_tree.h"

#include <ftw.h>

#include <cstdio>
#include <sys/stat.h>

namespace comera {

namespace {

int remove_entry(const char* path, const struct stat*, int, struct FTW*) {
  return std::remove(path) == 0 ? 0 : 1;  // non-zero stops the walk
}

}  // namespace

bool remove_tree(const std::string& path) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) return true;
  // Children before their folder (FTW_DEPTH); links are entries of their own (FTW_PHYS).
  return nftw(path.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS) == 0;
}

}  // namespace comera
