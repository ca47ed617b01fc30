// core/util/process.h, the one helper that starts programs: whole output and exit status,
// standard error kept apart, dropped or merged, input fed in, output line by line, a program
// in the background with its log, and the errors for a program that cannot start or fails.
#include "core/util/error.h"
#include "core/util/process.h"
#include "tests/support/catch.h"
#include "tests/support/temp_dir.h"

#include <fstream>
#include <sstream>

using namespace comera;
using Catch::Matchers::Contains;

TEST_CASE("run_process returns the whole output and the exit status", "[process]") {
  auto r = run_process({"sh", "-c", "printf 'a\\nb'; echo oops >&2; exit 3"}, "sh", ErrorOutput::Discard);
  CHECK(r.status == 3);
  CHECK(r.output == "a\nb");
  r = run_process({"sh", "-c", "echo out; echo err >&2"}, "sh", ErrorOutput::Merge);
  CHECK(r.status == 0);
  CHECK_THAT(r.output, Contains("out\n") && Contains("err\n"));
  r = run_process({"cat"}, "cat", ErrorOutput::Inherit, "fed in\n");
  CHECK(r.output == "fed in\n");
  const std::string big(200000, 'x');  // more than a pipe holds: read while the child writes
  CHECK(run_process({"cat"}, "cat", ErrorOutput::Inherit, big).output == big);
  r = run_process({"sh", "-c", "kill -9 $$"}, "sh");
  CHECK(r.status == -1);
  CHECK_THROWS_WITH(run_process({"no-such-program-here"}, "the helper"),
                    Contains("the helper: cannot run 'no-such-program-here'"));
}

TEST_CASE("run_lines calls back per line and fails on a non-zero exit", "[process]") {
  std::vector<std::string> lines;
  run_lines({"sh", "-c", "cat; printf 'last'"}, "one\ntwo\n",
            [&](const std::string& line) { lines.push_back(line); }, "sh");
  CHECK(lines == std::vector<std::string>{"one", "two", "last"});
  CHECK_THROWS_WITH(run_lines({"sh", "-c", "exit 4"}, "", [](const std::string&) {}, "the reader"),
                    Contains("the reader: 'sh' failed (exit status 4)"));
}

TEST_CASE("start_process runs in the background with its output in a log", "[process]") {
  comera::testing::TempDir dir;
  const pid_t pid = start_process({"sh", "-c", "echo to-log; echo err-too >&2; exit 2"},
                                  dir.file("run.log"), "sh");
  CHECK(wait_process(pid) == 2);
  std::ostringstream log;
  log << std::ifstream(dir.file("run.log")).rdbuf();
  CHECK_THAT(log.str(), Contains("to-log") && Contains("err-too"));
  CHECK_THROWS_WITH(start_process({"sh"}, dir.file("no/such/dir/x.log"), "sh"), Contains("cannot write"));
}
