// `comera data build-pairs`: the default sentence-pair task (code vs docstring) from Python sources.
#include "dataprep/docstring_pairs.h"
#include "search/cli/command.h"

#include <iostream>

namespace comera::cli {
namespace {

int run(int argc, char** argv) {
  auto options = make_options(
      "data build-pairs",
      "Build the default 3-class sentence-pair task from Python sources, in MNLI's JSONL form:\n"
      "a function's code vs its own docstring (entailment), another docstring of its module\n"
      "(neutral), or one of another module (contradiction); train/dev/test split by package.");
  options.add_options()("out", "Output folder (train.jsonl, dev.jsonl, test.jsonl, summary.json)",
                        cxxopts::value<std::string>()->default_value(default_pairs_dir()))(
      "source", "Folder of .py files (default: the standard library of --python)",
      cxxopts::value<std::string>()->default_value(""))(
      "python", "python3 that parses the sources (its ast module)",
      cxxopts::value<std::string>()->default_value(default_python()))(
      "seed", "Seed for the split, the negatives and the row order",
      cxxopts::value<uint64_t>()->default_value("1"))(
      "max-per-module", "Functions paired per module (0 = all)",
      cxxopts::value<int64_t>()->default_value("0"))(
      "train-negatives", "Triples per training function, each with another neutral and "
      "contradiction docstring (dev and test keep one)",
      cxxopts::value<int64_t>()->default_value("3"))(
      "dev-fraction", "Share of functions for dev", cxxopts::value<double>()->default_value("0.1"))(
      "test-fraction", "Share of functions for test",
      cxxopts::value<double>()->default_value("0.1"))(
      "json", "Print the summary as JSON (progress still goes to stderr)");
  auto parsed = parse(options, argc, argv);
  if (!parsed) return 0;
  const auto& r = *parsed;
  DocstringPairOptions o;
  o.out_dir = r["out"].as<std::string>();
  o.source_dir = r["source"].as<std::string>();
  o.python = r["python"].as<std::string>();
  o.seed = r["seed"].as<uint64_t>();
  o.max_per_module = r["max-per-module"].as<int64_t>();
  o.train_negatives = r["train-negatives"].as<int64_t>();
  o.dev_fraction = r["dev-fraction"].as<double>();
  o.test_fraction = r["test-fraction"].as<double>();
  o.log = [](const std::string& line) { std::cerr << line << std::endl; };
  const auto summary = build_docstring_pairs(o);
  if (r.count("json")) {
    std::cout << summary.to_json().dump(2) << std::endl;
    return 0;
  }
  std::cout << "source   " << summary.source_dir << " (python " << summary.python_version << ")\n"
            << "files    " << summary.files << " read, " << summary.files_failed
            << " not parsable\n"
            << "usable   " << summary.functions << " functions with docstrings in "
            << summary.modules << " modules; " << summary.anchors_dropped
            << " dropped (no distinct negative)\n";
  for (const auto* s : {&summary.train, &summary.dev, &summary.test})
    std::cout << "pairs    " << s->pairs << " (" << s->per_label[0] << " entailment, "
              << s->per_label[1] << " neutral, " << s->per_label[2] << " contradiction) from "
              << s->functions << " functions in " << s->modules << " modules -> " << s->file
              << "\n";
  return 0;
}

Register reg("data build-pairs", "Build the default code/docstring sentence-pair task (MNLI JSONL)",
             run);

}  // namespace
}  // namespace comera::cli
