// `comera merge A.db B.db -o C.db`: several results databases into one, without duplicates.
#include "core/util/error.h"
#include "search/cli/command.h"
#include "search/store/merge.h"
#include "search/store/results_db.h"

#include <chrono>
#include <filesystem>
#include <iostream>
#include <optional>
#include <utility>
#include <vector>

namespace comera::cli {
namespace {

int run(int argc, char** argv) {
  auto options = make_options(
      "merge",
      "Merge results databases into one (created if missing). Trials match by id across "
      "copies or by study + config hash; the more finished copy is kept");
  options.add_options()("inputs", "Databases to merge", cxxopts::value<std::vector<std::string>>())(
      "o,output", "Destination database", cxxopts::value<std::string>());
  options.parse_positional({"inputs"});
  options.positional_help("A.db B.db ...");
  auto parsed = parse(options, argc, argv);
  if (!parsed) return 0;
  if (!parsed->count("inputs") || !parsed->count("output"))
    throw Error("give inputs and -o, e.g. comera merge a.db b.db -o all.db");
  const std::string output = (*parsed)["output"].as<std::string>();
  // Every input opened before the output is created or written: a bad one changes nothing.
  std::vector<std::pair<std::string, store::ResultsDb>> sources;
  for (const auto& input : (*parsed)["inputs"].as<std::vector<std::string>>()) {
    if (std::filesystem::exists(input) && std::filesystem::exists(output) && std::filesystem::equivalent(input, output)) {
      std::cout << input << ": is the destination, skipped\n";
      continue;
    }
    sources.emplace_back(input, store::ResultsDb::open(input, store::ResultsDb::Mode::ReadOnly, "each input"));
  }
  {
    // Studies that cannot be merged are named before the output is made or opened for writing.
    std::optional<store::ResultsDb> existing;
    if (std::filesystem::exists(output)) existing.emplace(store::ResultsDb::open(output, store::ResultsDb::Mode::ReadOnly, "-o"));
    std::vector<store::ResultsDb*> inputs;
    for (auto& source : sources) inputs.push_back(&source.second);
    store::check_mergeable(existing ? &*existing : nullptr, inputs);
  }
  auto into = store::ResultsDb::open(output, store::ResultsDb::Mode::ReadWrite, "-o");
  // One transaction for every input: a failure on a later one leaves the output as it was, and
  // what was added is said once it is in.
  std::vector<std::string> added;
  into.write([&] {
    for (auto& [input, from] : sources) {
      // One progress line per second on stderr, so large merges show they are moving.
      auto last = std::chrono::steady_clock::now();
      const auto c = store::merge_database(
          into, from, [&](const std::string& study, int64_t done, int64_t total) {
            const auto now = std::chrono::steady_clock::now();
            if (now - last < std::chrono::seconds(1)) return;
            last = now;
            std::cerr << input << ": study " << study << ", " << done << "/" << total << " trials\n";
          });
      added.push_back(input + ": " + std::to_string(c.trials_added) + " trials added, " +
                      std::to_string(c.trials_replaced) + " replaced by a more finished copy, " +
                      std::to_string(c.trials_skipped) + " already present; " + std::to_string(c.studies_added) +
                      " studies and " + std::to_string(c.kernel_choices_copied) + " kernel choices added");
    }
  });
  for (const auto& line : added) std::cout << line << "\n";
  return 0;
}

Register reg("merge", "Merge results databases without duplicates (A.db B.db -o C.db)", run);

}  // namespace
}  // namespace comera::cli
