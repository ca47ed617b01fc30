#pragma once
// The quickstart's database, made in seconds: the quickstart's own sweep spec run on the WordNet
// fixtures (the real data takes minutes), from the repository root as the README says.
#include "core/util/process.h"
#include "core/util/source_dir.h"
#include "tests/support/catch.h"
#include "tests/support/cli_process.h"
#include "tests/support/temp_dir.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <string>

namespace comera::testing {

// `comera ARGS` run from the repository root; the test fails unless it exits 0.
inline std::string run_from_root(const std::string& args) {
  const auto r = run_process({"/bin/sh", "-c", "cd " + source_dir() + " && " + cli_path() + " " + args}, "comera",
                             ErrorOutput::Merge);
  INFO("comera " << args << "\n" << r.output);
  REQUIRE(r.status == 0);
  return r.output;
}

struct QuickstartDb {
  std::string data;  // the WordNet task built from the fixtures
  std::string db;    // `results` + "/quickstart.db"
};

inline QuickstartDb make_quickstart_db(const TempDir& dir, const std::string& results) {
  QuickstartDb out{dir.file("wordnet"), results + "/quickstart.db"};
  run_from_root("data build-wordnet --source " + source_dir() + "/tests/fixtures/wordnet --out " + out.data);
  nlohmann::json spec;
  std::ifstream(source_dir() + "/experiments/sweeps/quickstart.json") >> spec;
  spec["base"] = source_dir() + "/experiments/sweeps/quickstart_base.json";
  spec["overrides"] = {{"data.dir", out.data}};
  std::ofstream(dir.file("quickstart.json")) << spec.dump(2);
  run_from_root("sweep " + dir.file("quickstart.json") + " --db " + out.db + " --quiet --no-front");
  return out;
}

}  // namespace comera::testing
