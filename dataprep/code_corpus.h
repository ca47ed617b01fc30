#pragma once
// `comera data code-corpus`: a code corpus in CodeSearchNet's schema and layout
// (codesearchnet.h) built from source code that Debian ships, for the six CodeSearchNet
// languages where a package has them: Python's standard library (read by python3's ast, as the
// code/docstring pair task reads it), Go's standard library (golang-1.19-src), OpenJDK 17's
// class library (openjdk-17-source's src.zip, read in place), and library sources of
// JavaScript (node-lodash, node-underscore, node-async), PHP (php-twig, php-monolog,
// php-symfony-console) and Ruby (libruby3.1's standard library), the others by the heuristics
// of code_extractors.h. One function per record, with its doc comment where it has one;
// functions shorter than 3 lines (Python: those without a docstring, which python3's reader
// skips) or named like tests are left out (CodeSearchNet's filters);
// exact duplicates of a language's code are removed (the first in path order kept); files are
// split into train/valid/test by a hash of their path, so the same sources give the same splits
// on every machine.
#include "core/data/data_dirs.h"
#include "dataprep/docstring_pairs.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace comera {

// Where one language's sources are: a folder, or a .zip read in place; for Python "" means the
// standard library of the python3 used. `package` names the Debian package that ships it.
struct CodeSource {
  std::string language, path, package;
};

// The Debian sources above, as installed by scripts/setup.sh (whether present or not).
std::vector<CodeSource> default_code_sources();

// The split of a file: "train", "valid" or "test", from a hash (FNV-1a) of `key` (the file's
// package and path) against the fractions.
std::string corpus_split(const std::string& key, double valid_fraction, double test_fraction);

struct CodeCorpusOptions {
  std::vector<std::string> languages;  // empty = the six
  std::vector<CodeSource> sources;     // empty = default_code_sources()
  std::string out_dir = default_code_corpus_dir();
  std::string python = default_python();
  double valid_fraction = 0.1, test_fraction = 0.1;
  int64_t max_files = 0;                // per language, in path order (Python: all); 0 = all
  int64_t records_per_file = 30000;     // per .jsonl.gz shard
  // A language asked for by name whose sources are all missing is an error; with this false,
  // or when every language is asked for, it is skipped and noted.
  bool require_all = false;
  std::function<void(const std::string&)> log;  // progress lines
};

struct CodeCorpusLanguage {
  std::vector<std::string> sources;  // "package: path" read
  std::string skipped;               // why the language was left out ("" when built)
  int64_t files = 0, files_failed = 0;
  int64_t found = 0;       // functions with a body
  int64_t filtered = 0;    // shorter than 3 lines or named like a test
  int64_t duplicates = 0;  // exact copies of an earlier function's code
  std::map<std::string, int64_t> records, documented;  // per split
  nlohmann::json to_json() const;
};

struct CodeCorpusSummary {
  std::string out_dir;
  double valid_fraction = 0, test_fraction = 0;
  std::map<std::string, CodeCorpusLanguage> languages;
  nlohmann::json to_json() const;
};

// Extracts, filters, de-duplicates, splits and writes {out_dir}/{language}/final/jsonl/{split}/
// {language}_{split}_{k}.jsonl.gz and {out_dir}/summary.json (older shards of a rebuilt
// language and split are removed). The same sources and options give the same records.
CodeCorpusSummary build_code_corpus(const CodeCorpusOptions& options);

}  // namespace comera
