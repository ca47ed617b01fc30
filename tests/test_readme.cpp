// The README's first steps run as written, so the README cannot drift from the CLI: against a
// quickstart database made here by the quickstart's own sweep spec on WordNet fixtures (the real
// data takes minutes). Training commands get the fixture data appended; `reproduce NAME` (minutes
// on the real data) is checked for its flags with --help.
#include "core/util/source_dir.h"
#include "tests/support/catch.h"
#include "tests/support/cli_process.h"
#include "tests/support/quickstart_db.h"
#include "tests/support/temp_dir.h"

#include <fstream>

using Catch::Matchers::Contains;

namespace {

std::string source(const std::string& path) { return comera::source_dir() + "/" + path; }

// The `build/comera ...` lines between the README's first-steps markers.
std::vector<std::string> first_steps() {
  std::ifstream in(source("README.md"));
  std::vector<std::string> commands;
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("<!-- first-steps:", 0) == 0) {
      inside = line.find("end") == std::string::npos;
      continue;
    }
    const auto start = line.find_first_not_of(' ');
    if (inside && start != std::string::npos && line.compare(start, 13, "build/comera ") == 0)
      commands.push_back(line.substr(start + 13));
  }
  return commands;
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

}  // namespace

TEST_CASE("the README's first steps run against a quickstart database", "[readme][cli]") {
  const auto commands = first_steps();
  REQUIRE(commands.size() >= 8);

  comera::testing::TempDir dir;
  const std::string results = dir.file("results");
  const std::string data = comera::testing::make_quickstart_db(dir, results).data;
  const auto run = comera::testing::run_from_root;

  for (const auto& command : commands) {
    std::string args = replace_all(command, "results/", results + "/");
    if (args.rfind("train ", 0) == 0) args += " --data " + data + " --db " + results + "/comera.db --quiet";
    if (args.rfind("reproduce ", 0) == 0 && args.find("--list") == std::string::npos) args += " --help";
    const std::string output = run(args);
    if (command.rfind("pareto ", 0) == 0) CHECK_THAT(output, Contains("on the Pareto front"));
    if (command.rfind("runs list", 0) == 0) CHECK_THAT(output, Contains("quickstart") && Contains("late"));
    if (command.rfind("export-model ", 0) == 0) CHECK_THAT(output, Contains("wrote"));
  }
}
