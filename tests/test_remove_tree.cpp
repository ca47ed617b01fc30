// remove_tree deletes a whole tree without following links; and nothing in the project calls
// std::filesystem::remove_all, whose copy in pip's LibTorch 2.x crashes (core/util/remove_tree.h).
#include "core/util/remove_tree.h"
#include "core/util/source_dir.h"
#include "tests/support/catch.h"
#include "tests/support/temp_dir.h"

#include <filesystem>
#include <fstream>
#include <iterator>

namespace fs = std::filesystem;
using comera::remove_tree;

TEST_CASE("remove_tree deletes files, folders and links, and leaves link targets alone", "[remove_tree]") {
  const comera::testing::TempDir dir;
  const fs::path root = dir.file("tree"), outside = dir.file("outside");
  fs::create_directories(root / "a" / "b" / "c");
  fs::create_directories(outside);
  std::ofstream(root / "a" / "b" / "c" / "deep.txt") << "x";
  std::ofstream(root / "top.txt") << "y";
  std::ofstream(outside / "kept.txt") << "z";
  fs::create_directory_symlink(outside, root / "a" / "link_to_outside");
  fs::create_symlink(root / "missing", root / "dangling");

  CHECK(remove_tree(root.string()));
  CHECK_FALSE(fs::exists(fs::symlink_status(root)));
  CHECK(fs::exists(outside / "kept.txt"));
  CHECK(remove_tree(root.string()));  // already gone: nothing to do

  std::ofstream(dir.file("single")) << "s";
  CHECK(remove_tree(dir.file("single")));
  CHECK_FALSE(fs::exists(dir.file("single")));
}

TEST_CASE("remove_tree reports an entry it cannot delete", "[remove_tree]") {
  // procfs refuses every unlink, root's too, so the failure does not hang on permission bits.
  REQUIRE(fs::exists("/proc/self/status"));
  CHECK_FALSE(remove_tree("/proc/self/status"));
}

TEST_CASE("no source calls std::filesystem::remove_all", "[remove_tree]") {
  int scanned = 0;
  for (const auto* folder : {"core", "search", "tests"})
    for (const auto& entry : fs::recursive_directory_iterator(comera::source_dir() + "/" + folder)) {
      const auto ext = entry.path().extension();
      if (ext != ".cpp" && ext != ".h") continue;
      ++scanned;
      std::ifstream in(entry.path());
      const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      INFO(entry.path().string());
      // Spelt in two pieces so that this file does not match itself.
      CHECK(text.find(std::string("remove") + "_all(") == std::string::npos);
    }
  CHECK(scanned > 100);
}
