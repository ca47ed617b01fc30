// Flags checked before any work: negative counts (--threads, --stop-at, --max-trials) are refused
// naming the flag, thread counts above the machine's cores capped with a note, and a device the
// machine lacks refused before tune makes its database.
#include "core/util/source_dir.h"
#include "tests/support/catch.h"
#include "tests/support/cli_process.h"
#include "tests/support/temp_dir.h"

#include <filesystem>

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

TEST_CASE("negative step and trial counts are errors naming the flag, before any work", "[cli]") {
  const std::string root = comera::source_dir();
  auto r = comera::testing::run_cli("train --config " + root +
                                    "/experiments/small_two_encoder.json --stop-at -3 --no-db");
  CHECK(r.status != 0);
  CHECK_THAT(r.output, Contains("--stop-at -3") && !Contains("loading data"));
  r = comera::testing::run_cli("sweep " + root + "/experiments/sweeps/quickstart.json --max-trials -1 --dry-run");
  CHECK(r.status != 0);
  CHECK_THAT(r.output, Contains("--max-trials -1"));
}

TEST_CASE("a flag's value of the wrong kind is named with its flag and where the help is", "[cli]") {
  auto r = comera::testing::run_cli("shapes --in 768 --out 3072 --count two");
  CHECK(r.status != 0);
  CHECK_THAT(r.output, Contains("--count two: not a value of the kind it takes (see `comera shapes --help`)"));
  r = comera::testing::run_cli("shapes --in=7x8 --out 3072");
  CHECK_THAT(r.output, Contains("--in 7x8: not a value of the kind it takes"));
  r = comera::testing::run_cli("runs show abc");
  CHECK_THAT(r.output, Contains("the argument abc: not a value of the kind it takes"));
  r = comera::testing::run_cli("shapes --in 768 --out 3072 --modes 0");
  CHECK(r.status != 0);
  CHECK_THAT(r.output, Contains("--modes 0: give 1 or more"));
  r = comera::testing::run_cli("shapes --bogus 1");
  CHECK_THAT(r.output, Contains("bogus") && Contains("does not exist (see `comera shapes --help`)"));
}

TEST_CASE("tune refuses a device this machine lacks before it makes its database", "[cli]") {
  const comera::testing::TempDir dir;
  // cuda:7: absent from a CPU build and from a one-GPU machine alike.
  const auto r = comera::testing::run_cli("tune --device cuda:7 --in-modes 4,4 --out-modes 4,4 --rank 2 "
                                          "--tokens 16 --db " + dir.file("t.db"));
  CHECK(r.status != 0);
  CHECK_THAT(r.output, Contains("cuda:7"));
  CHECK_FALSE(std::filesystem::exists(dir.file("t.db")));
}

TEST_CASE("a command group's help, and a command it lacks, are told apart", "[cli]") {
  auto r = comera::testing::run_cli("runs --help");
  CHECK(r.status == 0);
  CHECK_THAT(r.output, Contains("runs list") && Contains("runs show") && !Contains("bench layer"));
  r = comera::testing::run_cli("runs nope");
  CHECK(r.status == 2);
  CHECK_THAT(r.output, Contains("unknown command 'runs nope'") && Contains("comera runs --help"));
}

TEST_CASE("counts a benchmark cannot run with are refused, naming the flag", "[cli]") {
  for (const std::string flags : {"--repeats 0", "--warmup -1"}) {
    const auto r = comera::testing::run_cli("bench layer " + flags);
    INFO(flags);
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains(flags) && !Contains("median"));
  }
  const auto r = comera::testing::run_cli("bench paths --min-repeats 10 --max-repeats 2");
  CHECK(r.status == 1);
  CHECK_THAT(r.output, Contains("--max-repeats 2 is below --min-repeats 10"));
  for (const std::string bench : {"ttm", "embedding-bag"}) {
    const auto z = comera::testing::run_cli("bench " + bench + " --zipf -1");
    INFO(z.output);
    CHECK(z.status == 1);
    CHECK_THAT(z.output, Contains("--zipf -1") && Contains(">= 0") && !Contains("median"));
  }
}

TEST_CASE("reproduce reads its published figures before it runs anything", "[cli]") {
  const comera::testing::TempDir dir;
  const auto r = comera::testing::run_cli("reproduce mnli_table --quiet --reference " + dir.file("none.json") +
                                          " --db " + dir.file("r.db") + " --out " + dir.file("t.md"));
  INFO(r.output);
  CHECK(r.status == 1);
  CHECK_THAT(r.output, Contains("none.json") && !Contains("trial 1"));
  CHECK_FALSE(std::filesystem::exists(dir.file("r.db")));
}

