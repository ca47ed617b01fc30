// `comera data synth-criteo`: synthetic click logs in the Criteo format (Criteo itself cannot be
// downloaded here), labelled synthetic everywhere they are shown.
#include "dataprep/synth_criteo.h"
#include "core/util/error.h"
#include "search/cli/command.h"

#include <nlohmann/json.hpp>

#include <iostream>

namespace comera::cli {
namespace {

int run(int argc, char** argv) {
  auto options = make_options(
      "data synth-criteo",
      "Write SYNTHETIC click logs in exactly the Criteo Kaggle format (label, 13 integers, 26\n"
      "8-digit hex categoricals, tab-separated, empty fields allowed): the Kaggle table sizes\n"
      "(optionally scaled down), Zipf-skewed ids, labels drawn from a hidden planted logistic\n"
      "model of a few features. Prints the planted model's own AUC on each split: what a\n"
      "perfect model could reach. Writes train.txt, eval.txt (or .gz) and summary.json.");
  options.add_options()("out", "Output folder", cxxopts::value<std::string>())(
      "train-lines", "Training lines", cxxopts::value<int64_t>()->default_value("100000"))(
      "eval-lines", "Evaluation lines", cxxopts::value<int64_t>()->default_value("20000"))(
      "scale", "Table sizes as a share of Kaggle's, in (0, 1]", cxxopts::value<double>()->default_value("1"))(
      "zipf", "Exponent of the id frequencies", cxxopts::value<double>()->default_value("1.05"))(
      "seed", "Seed (the same seed writes the same bytes)", cxxopts::value<uint64_t>()->default_value("1"))(
      "gzip", "Write .txt.gz files")(
      "json", "Print the summary as JSON (progress still goes to stderr)");
  auto parsed = parse(options, argc, argv);
  if (!parsed) return 0;
  const auto& r = *parsed;
  if (!r.count("out")) throw Error("--out: name the output folder for the synthetic files");
  SynthCriteoOptions o;
  o.out_dir = r["out"].as<std::string>();
  o.train_lines = r["train-lines"].as<int64_t>();
  o.eval_lines = r["eval-lines"].as<int64_t>();
  o.scale = r["scale"].as<double>();
  o.zipf = r["zipf"].as<double>();
  o.seed = r["seed"].as<uint64_t>();
  o.gzip = r.count("gzip") > 0;
  o.progress = [](int64_t done, int64_t total) {
    std::cerr << "\rsynthetic lines " << done << " / " << total << std::flush;
  };
  const auto s = write_synth_criteo(o);
  if (o.train_lines + o.eval_lines >= 100000) std::cerr << std::endl;
  if (r.count("json")) {
    std::cout << s.to_json().dump(2) << std::endl;
    return 0;
  }
  std::cout << "SYNTHETIC click logs (Criteo format, planted labels), seed " << o.seed << ", scale "
            << o.scale << "\n";
  for (const auto* split : {&s.train, &s.eval})
    std::cout << "  " << split->file << ": " << split->lines << " lines, "
              << split->positives << " positive; planted model's AUC " << split->planted_auc << "\n";
  std::cout << "  planted model's eval AUC without one label-bearing table (0-based, rows): ";
  bool first = true;
  for (const auto& [table, auc] : s.eval.planted_auc_without_table) {
    std::cout << (first ? "" : ", ") << table << " (" << s.table_sizes[static_cast<size_t>(table)]
              << "): " << auc;
    first = false;
  }
  std::cout << "\n";
  std::cout << "  table sizes (use as data.criteo.table_sizes and model.table_sizes): [";
  for (size_t t = 0; t < s.table_sizes.size(); ++t) std::cout << (t ? ", " : "") << s.table_sizes[t];
  std::cout << "]\n";
  return 0;
}

Register reg("data synth-criteo", "Write synthetic click logs in the Criteo format (planted labels)", run);

}  // namespace
}  // namespace comera::cli
