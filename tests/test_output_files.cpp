// Output files of the CLI (tables, plots, reports): never written over a results database or a
// file the command reads, whatever the spelling of the path, and replaced whole or not at all.
#include "core/util/error.h"
#include "core/util/output_file.h"
#include "search/store/trial_queue.h"
#include "tests/support/catch.h"
#include "tests/support/cli_process.h"
#include "tests/support/temp_dir.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>

using namespace comera;
using Catch::Matchers::Contains;
using comera::testing::TempDir;

namespace {

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Study "s" with two complete trials, enough for an export and a plotted front.
void make_results(const std::string& path) {
  auto db = store::ResultsDb::open(path);
  const auto study = store::create_or_get_study(db, "s", nlohmann::json::object());
  store::enqueue_trials(db, study, {{{"i", 1}}, {{"i", 2}}});
  for (double loss : {1.0, 0.5}) {
    const auto trial = store::claim_next_trial(db, study.id, "w", current_environment());
    store::finish_trial(db, trial->id, "w", store::TrialState::Complete,
                        {{"eval_loss", loss}, {"size", 100 / loss}});
  }
}

}  // namespace

TEST_CASE("export, pareto --plot: the database read is never the output, by any name",
          "[cli][output]") {
  TempDir dir;
  const std::string db = dir.file("r.db");
  make_results(db);
  // The same file under another name: a hard link and a path through "..".
  std::filesystem::create_hard_link(db, dir.file("alias.db"));
  const std::string dotted = dir.file("sub/../r.db");
  std::filesystem::create_directories(dir.file("sub"));
  const std::string before = read_bytes(db);
  struct Case {
    std::string args, flag, target;
  };
  for (const auto& c : {Case{"export --db " + db + " -o " + db, "-o", db},
                        Case{"export --db " + db + " -o " + dir.file("alias.db"), "-o",
                             dir.file("alias.db")},
                        Case{"export --db " + dotted + " --output " + db, "--output", db},
                        Case{"pareto --db " + db + " --study s --plot " + db, "--plot", db},
                        Case{"pareto --db " + db + " --study s --plot " + dotted, "--plot",
                             dotted}}) {
    const auto r = comera::testing::run_cli(c.args);
    INFO(c.args << "\n" << r.output);
    CHECK(r.status != 0);
    CHECK_THAT(r.output, Contains(c.flag) && Contains(c.target) && !Contains("wrote"));
    CHECK(read_bytes(db) == before);
  }
  // Another results database is not an output either, even when not the one read.
  const std::string other = dir.file("other.db");
  make_results(other);
  const std::string other_before = read_bytes(other);
  const auto r = comera::testing::run_cli("export --db " + db + " -o " + other);
  INFO(r.output);
  CHECK(r.status != 0);
  CHECK_THAT(r.output, Contains(other) && Contains("database"));
  CHECK(read_bytes(other) == other_before);
}

TEST_CASE("export -o replaces an older output whole and leaves no temporary file",
          "[cli][output]") {
  TempDir dir;
  const std::string db = dir.file("r.db");
  make_results(db);
  const std::string csv = dir.file("out/table.csv");
  std::filesystem::create_directories(dir.file("out"));
  std::string old;
  for (int i = 0; i < 10000; ++i) old += "OLD OUTPUT\n";
  std::ofstream(csv) << old;
  const auto r = comera::testing::run_cli("export --db " + db + " --per trial -o " + csv);
  INFO(r.output);
  REQUIRE(r.status == 0);
  const std::string table = read_bytes(csv);
  CHECK_THAT(table, Contains("trial_id") && !Contains("OLD OUTPUT"));
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.file("out"))) {
    INFO(entry.path());
    ++files;
  }
  CHECK(files == 1);
}

TEST_CASE("OutputFile: checked before any work, then written whole or not at all", "[output]") {
  TempDir dir;
  const std::string out = dir.file("plots/front.png");
  const OutputFile file(out, "--plot", {dir.file("r.db")});
  CHECK_FALSE(std::filesystem::exists(dir.file("plots")));  // nothing made before the write
  file.write_text([](std::ostream& o) { o << "first"; });
  CHECK(read_bytes(out) == "first");
  CHECK_THROWS_WITH(file.write_text([](std::ostream& o) {
    o << "half";
    throw Error("gnuplot failed");
  }),
                    Contains("gnuplot failed"));
  CHECK(read_bytes(out) == "first");
  CHECK(std::distance(std::filesystem::directory_iterator(dir.file("plots")),
                      std::filesystem::directory_iterator()) == 1);
  // A symbolic link stays a link; its file gets the new content.
  std::filesystem::create_symlink(out, dir.file("latest.png"));
  OutputFile(dir.file("latest.png"), "--plot", {}).write_text([](std::ostream& o) { o << "new"; });
  CHECK(std::filesystem::is_symlink(dir.file("latest.png")));
  CHECK(read_bytes(out) == "new");
  // Devices are written as they are, with no temporary file beside them.
  OutputFile("/dev/null", "--output", {}).write_text([](std::ostream& o) { o << "gone"; });

  const std::string db = dir.file("r.db");
  make_results(db);
  std::ofstream(dir.file("spec.json")) << "{}";
  std::filesystem::create_symlink(dir.file("spec.json"), dir.file("spec_link.json"));
  CHECK_THROWS_WITH(OutputFile(dir.file("plots"), "--plot", {}), Contains("is a folder"));
  CHECK_THROWS_WITH(OutputFile(db, "--output", {}),
                    Contains("--output " + db + " is a SQLite database"));
  CHECK_THROWS_WITH(OutputFile(dir.file("spec_link.json"), "--out", {dir.file("spec.json")}),
                    Contains("which this command reads"));
  CHECK_THROWS_WITH(OutputFile(db + "-wal", "--output", {db}), Contains(db + "-wal, which"));
  // A file read that appears after the check (a sweep creating its database) is caught at the
  // write.
  const OutputFile table(dir.file("table.csv"), "--output", {dir.file("new.db")});
  make_results(dir.file("new.db"));
  std::filesystem::create_hard_link(dir.file("new.db"), dir.file("table.csv"));
  CHECK_THROWS_WITH(table.write_text([](std::ostream& o) { o << "rows"; }),
                    Contains("which this command reads"));

  // A folder read ("dir/"): nothing inside it, at any depth or spelling, whether it exists yet.
  std::filesystem::create_directories(dir.file("data"));
  std::ofstream(dir.file("data/dev.jsonl")) << "{}";
  for (const auto& inner : {dir.file("data/dev.jsonl"), dir.file("data/new/x.png"), dir.file("plots/../data/y.png")})
    CHECK_THROWS_WITH(OutputFile(inner, "--plot", {dir.file("data") + "/"}),
                      Contains("is inside " + dir.file("data") + "/, a folder this command reads"));
  CHECK_THROWS_WITH(OutputFile(dir.file("checkpoints/s/x.png"), "--plot", {dir.file("checkpoints/s/")}),
                    Contains("a folder this command reads"));
  CHECK_NOTHROW(OutputFile(dir.file("data.png"), "--plot", {dir.file("data/")}));
  CHECK_NOTHROW(OutputFile(dir.file("database/x.png"), "--plot", {dir.file("data/")}));
  // Two outputs of one command on one file.
  const OutputFile plot(dir.file("x.out"), "--plot", {}), report(dir.file("./x.out"), "--report", {});
  CHECK_THROWS_WITH(plot.require_distinct(report), Contains("--plot") && Contains("--report") &&
                                                       Contains("name the same file"));
  CHECK_NOTHROW(plot.require_distinct(OutputFile(dir.file("y.out"), "--report", {})));
}
