// The commit a run records is the one the binary was built from, stamped at build time
// (cmake/stamp_commit.cmake), not what git says at run time: the CLI started without git on its
// PATH still records it.
#include "comera_build_stamp.h"
#include "tests/support/catch.h"
#include "tests/support/cli_process.h"
#include "core/util/process.h"

#include <nlohmann/json.hpp>

#include <string>

TEST_CASE("runs record the commit stamped at build time, git or no git", "[build_stamp]") {
  const std::string commit = COMERA_BUILD_COMMIT;
  INFO("stamped: " << commit);
  // Built from a checkout (as CI and the set-up do): a full SHA-1.
  REQUIRE(commit.size() == 40);
  CHECK(commit.find_first_not_of("0123456789abcdef") == std::string::npos);

  const auto r = comera::run_process(
      {"/bin/sh", "-c", "PATH=/nonexistent " + comera::testing::cli_path() +
                            " bench ttm --ids 8 --repeats 1 --warmup 0 --json 2>/dev/null"},
      "comera", comera::ErrorOutput::Discard);
  INFO(r.output);
  REQUIRE(r.status == 0);
  const auto env = nlohmann::json::parse(r.output).at("environment");
  CHECK(env.at("git_commit") == commit);
  CHECK(env.at("git_dirty") == static_cast<bool>(COMERA_BUILD_DIRTY));
}
