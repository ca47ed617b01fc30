// `comera data code-corpus`: a CodeSearchNet-format code corpus from the sources Debian ships.
#include "dataprep/code_corpus.h"
#include "core/util/comma_list.h"
#include "core/util/error.h"
#include "search/cli/command.h"

#include <cstdio>
#include <iostream>

namespace comera::cli {
namespace {

int run(int argc, char** argv) {
  auto options = make_options(
      "data code-corpus",
      "Build a code corpus in CodeSearchNet's schema and layout ({language}/final/jsonl/{split}/\n"
      "{language}_{split}_{k}.jsonl.gz) from source code Debian ships: Python's and Go's standard\n"
      "libraries, OpenJDK 17's class library, and JavaScript, PHP and Ruby library sources\n"
      "(scripts/setup.sh installs them). One function per record with its doc comment where it\n"
      "has one; exact duplicates removed; files split into train/valid/test by a hash of their\n"
      "path. Counts per language and split are printed and written to summary.json. Read it with\n"
      "data.format codesearchnet (docs/code-pretraining.md).");
  options.add_options()("out", "Output folder", cxxopts::value<std::string>()->default_value(default_code_corpus_dir()))(
      "languages", "Comma-separated languages (default: all six; a missing one is then skipped)",
      cxxopts::value<std::string>()->default_value(""))(
      "source", "LANGUAGE=PATH: read this folder (or .zip) for the language instead of the Debian "
      "default; repeatable", cxxopts::value<std::vector<std::string>>())(
      "python", "python3 that parses Python sources (its ast module)",
      cxxopts::value<std::string>()->default_value(default_python()))(
      "valid-fraction", "Share of files for valid", cxxopts::value<double>()->default_value("0.1"))(
      "test-fraction", "Share of files for test", cxxopts::value<double>()->default_value("0.1"))(
      "max-files", "Files read per language, in path order (0 = all; Python reads all)",
      cxxopts::value<int64_t>()->default_value("0"))(
      "records-per-file", "Records per .jsonl.gz shard", cxxopts::value<int64_t>()->default_value("30000"))(
      "json", "Print the summary as JSON (progress still goes to stderr)");
  auto parsed = parse(options, argc, argv);
  if (!parsed) return 0;
  const auto& r = *parsed;
  CodeCorpusOptions o;
  o.out_dir = r["out"].as<std::string>();
  if (const auto languages = r["languages"].as<std::string>(); !languages.empty())
    o.languages = split_list(languages, "--languages");
  o.require_all = !o.languages.empty();
  if (r.count("source")) {
    for (const auto& s : r["source"].as<std::vector<std::string>>()) {
      const auto eq = s.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == s.size())
        throw Error("--source " + s + ": expected LANGUAGE=PATH, e.g. --source go=/usr/share/go-1.19/src");
      o.sources.push_back({s.substr(0, eq), s.substr(eq + 1), "local"});
    }
    // Languages without a --source keep their Debian defaults.
    for (const auto& d : default_code_sources()) {
      bool given = false;
      for (const auto& s : o.sources) given = given || s.language == d.language;
      if (!given) o.sources.push_back(d);
    }
  }
  o.python = r["python"].as<std::string>();
  o.valid_fraction = r["valid-fraction"].as<double>();
  o.test_fraction = r["test-fraction"].as<double>();
  o.max_files = r["max-files"].as<int64_t>();
  o.records_per_file = r["records-per-file"].as<int64_t>();
  if (o.max_files < 0) throw Error("--max-files must be >= 0 (0 = all)");
  o.log = [](const std::string& line) { std::cerr << line << std::endl; };
  const auto summary = build_code_corpus(o);
  if (r.count("json")) {
    std::cout << summary.to_json().dump(2) << std::endl;
    return 0;
  }
  std::printf("| language | files | functions | train | valid | test | documented (train/valid/test) | duplicates | left out |\n"
              "|---|---:|---:|---:|---:|---:|---|---:|---:|\n");
  for (const auto& [language, l] : summary.languages) {
    if (!l.skipped.empty()) {
      std::printf("| %s | skipped: %s |||||||\n", language.c_str(), l.skipped.c_str());
      continue;
    }
    std::printf("| %s | %lld | %lld | %lld | %lld | %lld | %lld/%lld/%lld | %lld | %lld |\n", language.c_str(),
                static_cast<long long>(l.files), static_cast<long long>(l.found),
                static_cast<long long>(l.records.at("train")), static_cast<long long>(l.records.at("valid")),
                static_cast<long long>(l.records.at("test")), static_cast<long long>(l.documented.at("train")),
                static_cast<long long>(l.documented.at("valid")), static_cast<long long>(l.documented.at("test")),
                static_cast<long long>(l.duplicates), static_cast<long long>(l.filtered));
  }
  std::printf("written to %s (counts in summary.json)\n", summary.out_dir.c_str());
  return 0;
}

Register reg("data code-corpus", "Build a CodeSearchNet-format code corpus from Debian's sources", run);

}  // namespace
}  // namespace comera::cli
