#pragma once
// The default sentence-pair task, built from Python source (by default the standard library
// shipped with python3): sentence1 is a function's code (signature and body, docstring removed),
// sentence2 a docstring: the function's own -> entailment, another function's of the same module
// -> neutral, one from another module -> contradiction. Each chosen function gives all three, so
// classes are balanced. Modules are split into train/dev/test whole (by top-level package), and
// the negatives of a split come from that split only, so nothing leaks. The files are written in
// MNLI's JSONL form and read by read_mnli_jsonl like MNLI itself.
//
// Functions are extracted by python3's own `ast` module (run as a child process, standard library
// only): Python's grammar (decorators, multi-line signatures, nested brackets, string prefixes,
// encodings) is parsed exactly, where a hand-written scanner would misread some corner of it.
#include "core/data/data_dirs.h"
#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace comera {

// $COMERA_PYTHON if set, else /usr/bin/python3 when present, else python3 on PATH.
std::string default_python();

struct PyFunction {
  std::string module;  // dotted: "email.utils"
  std::string name;    // qualified within the module: "Message.get_payload"
  int64_t line = 0;
  std::string code;    // signature and body without the docstring, dedented
  std::string doc;     // the cleaned docstring (inspect.cleandoc)
  std::string file;    // relative to the source folder: "email/utils.py"
};

// A python3's version ("3.11.2") and standard-library folder, asked of it.
struct PythonInfo {
  std::string version, stdlib;
};
PythonInfo python_info(const std::string& python);

struct PyExtraction {
  std::string source_dir;
  int64_t files = 0;
  std::vector<std::string> failed;  // "path: error" for files python3 could not parse
  std::vector<PyFunction> functions;  // every function or method with a docstring and a body
};

// Parses every .py file under source_dir, in path order, skipping test folders (test, tests,
// idle_test), test_*.py, __pycache__ and site-/dist-packages. progress gets (files done, total).
PyExtraction extract_py_functions(const std::string& source_dir, const std::string& python,
                                  const std::function<void(int64_t, int64_t)>& progress = {});

struct DocstringPairOptions {
  std::string source_dir;  // "" = the standard library of `python`
  std::string out_dir = default_pairs_dir();
  std::string python = default_python();
  uint64_t seed = 1;
  int64_t max_per_module = 0;  // functions used as anchors per module; 0 = all
  // Triples per training function, each with another neutral and contradiction docstring
  // where there are others (the entailment row repeats); dev and test keep one. More
  // negatives per function make the cross-segment match, not the pairs, worth learning.
  int64_t train_negatives = 3;
  double dev_fraction = 0.1, test_fraction = 0.1;
  std::function<void(const std::string&)> log;  // progress lines
};

struct DocstringPairSplit {
  std::string file;  // written path
  int64_t modules = 0, functions = 0, pairs = 0;
  std::array<int64_t, 3> per_label{};
};

struct DocstringPairSummary {
  std::string source_dir, python, python_version;
  uint64_t seed = 0;
  int64_t max_per_module = 0;
  int64_t train_negatives = 1;
  int64_t files = 0, files_failed = 0;
  int64_t functions = 0;          // with a docstring of 3+ words and a body
  int64_t modules = 0;            // with 2+ such functions (the others cannot give neutrals)
  int64_t anchors_dropped = 0;    // no distinct docstring for a neutral or contradiction
  DocstringPairSplit train, dev, test;
  nlohmann::json to_json() const;
};

// Extracts, pairs, splits and writes train.jsonl, dev.jsonl, test.jsonl and summary.json to
// options.out_dir. The same options and sources give byte-identical .jsonl files.
DocstringPairSummary build_docstring_pairs(const DocstringPairOptions& options);

}  // namespace comera
