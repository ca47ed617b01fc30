// `cmake --install` gives a working install: the installed binary reads the experiment files
// from <prefix>/share/comera, not from the checkout it was built from, and COMERA_HOME points
// any binary at another folder (core/util/home_dir.h).
#include "core/util/process.h"
#include "core/util/remove_tree.h"
#include "tests/support/catch.h"
#include "tests/support/cli_process.h"
#include "tests/support/temp_dir.h"

#include <filesystem>
#include <string>

using Catch::Matchers::Contains;

namespace {

comera::ProcessResult shell(const std::string& command) {
  return comera::run_process({"/bin/sh", "-c", command}, "sh", comera::ErrorOutput::Merge);
}

}  // namespace

TEST_CASE("an installed comera reads its experiments from the install; COMERA_HOME overrides",
          "[install]") {
  const std::string cli = comera::testing::cli_path();
  const std::string build = std::filesystem::path(cli).parent_path().string();
  const comera::testing::TempDir dir;
  const std::string prefix = dir.file("prefix"), installed = prefix + "/bin/comera";
  auto r = shell("cmake --install " + build + " --prefix " + prefix);
  INFO(r.output);
  REQUIRE(r.status == 0);

  r = shell("cd / && " + installed + " --help");
  CHECK(r.status == 0);
  CHECK_THAT(r.output, Contains("read from " + prefix + "/share/comera"));
  r = shell("cd / && " + installed + " reproduce --list");
  CHECK(r.status == 0);
  CHECK_THAT(r.output, Contains("mnli_table"));
  // Without the install's copy of the paper's tables, the installed binary has none: it never
  // fell back to the checkout's.
  REQUIRE(comera::remove_tree(prefix + "/share/comera/experiments/paper"));
  r = shell("cd / && " + installed + " reproduce --list");
  CHECK_THAT(r.output, !Contains("mnli_table"));

  r = shell("COMERA_HOME=" + dir.file("elsewhere") + " " + cli + " --help");
  CHECK_THAT(r.output, Contains("read from " + dir.file("elsewhere")));
}
