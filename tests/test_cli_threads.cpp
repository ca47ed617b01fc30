// --threads on the command line: negative counts are refused naming the flag; counts above the
// machine's cores are capped, with a note.
#include "tests/support/catch.h"
#include "tests/support/cli_process.h"


using Catch::Matchers::Contains;

TEST_CASE("--threads: negative is an error, above the cores is capped with a note", "[cli]") {
  const std::string shapes = "shapes --in 768 --out 3072 --count 1 --threads ";
  auto r = comera::testing::run_cli(shapes + "-4");
  INFO(r.output);
  CHECK(r.status == 1);
  CHECK_THAT(r.output, Contains("--threads -4") && Contains("0 (all cores)"));

  r = comera::testing::run_cli(shapes + "999");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK_THAT(r.output, Contains("--threads 999") && Contains("using "));

  r = comera::testing::run_cli(shapes + "1");
  CHECK(r.status == 0);
  CHECK_THAT(r.output, !Contains("--threads"));
}
