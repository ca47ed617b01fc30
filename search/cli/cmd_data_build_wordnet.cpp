// `comera data build-wordnet`: the default task (WordNet glosses -> lexicographer files, and a
// sentence-pair variant) from WordNet 3.0's data files.
#include "dataprep/wordnet.h"
#include "search/cli/command.h"

#include <iostream>

namespace comera::cli {
namespace {

int run(int argc, char** argv) {
  auto options = make_options(
      "data build-wordnet",
      "Build the default task from WordNet 3.0 (Debian's wordnet-base): a synset's gloss ->\n"
      "its lexicographer file (26 noun classes, or 45 with --all-pos), as single-text JSONL,\n"
      "and sentence pairs in MNLI's JSONL form (a definition vs its own hypernym / another\n"
      "category of its file / a category of another file: entailment / neutral / contradiction).\n"
      "Synsets sharing a lemma or gloss stay in one split, so nothing leaks.");
  options.add_options()("out", "Output folder ({train,dev,test}.jsonl, pairs/, summary.json)",
                        cxxopts::value<std::string>()->default_value(default_wordnet_dir()))(
      "source", "Folder with WordNet's data.noun, data.verb, data.adj, data.adv",
      cxxopts::value<std::string>()->default_value(default_wordnet_source()))(
      "all-pos", "Every part of speech, 45 classes (default: nouns, 26 classes)")(
      "lemmas", "Single text as \"lemma, lemma: gloss\" (default: the gloss alone)")(
      "seed", "Seed for the split, the pairs' other definitions and the row order",
      cxxopts::value<uint64_t>()->default_value("1"))(
      "dev-fraction", "Share of synsets for dev", cxxopts::value<double>()->default_value("0.1"))(
      "test-fraction", "Share of synsets for test", cxxopts::value<double>()->default_value("0.1"))(
      "json", "Print the summary as JSON (progress still goes to stderr)");
  auto parsed = parse(options, argc, argv);
  if (!parsed) return 0;
  const auto& r = *parsed;
  WordNetOptions o;
  o.out_dir = r["out"].as<std::string>();
  o.source_dir = r["source"].as<std::string>();
  o.all_pos = r.count("all-pos") > 0;
  o.lemmas = r.count("lemmas") > 0;
  o.seed = r["seed"].as<uint64_t>();
  o.dev_fraction = r["dev-fraction"].as<double>();
  o.test_fraction = r["test-fraction"].as<double>();
  o.log = [](const std::string& line) { std::cerr << line << std::endl; };
  const auto summary = build_wordnet(o);
  if (r.count("json")) {
    std::cout << summary.to_json().dump(2) << std::endl;
    return 0;
  }
  std::cout << "source   " << summary.source_dir << ": " << summary.synsets << " synsets, "
            << summary.classes.size() << " classes (" << summary.classes.front() << " .. "
            << summary.classes.back() << ")\n"
            << "groups   " << summary.groups << " (synsets sharing a lemma or gloss; the largest has "
            << summary.largest_group << ")\n";
  for (const auto* s : {&summary.train, &summary.dev, &summary.test})
    std::cout << "split    " << s->synsets << " synsets in " << s->groups << " groups -> "
              << s->text_file << "; " << s->pairs << " pairs (" << s->anchors_dropped
              << " synsets left out: no hypernym, or no other category in their file) -> " << s->pair_file << "\n";
  return 0;
}

Register reg("data build-wordnet",
             "Build the default task from WordNet: gloss -> lexicographer file, and pairs", run);

}  // namespace
}  // namespace comera::cli
