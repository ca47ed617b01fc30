#include "dataprep/docstring_pairs.h"

#include "core/data/mnli.h"
#include "core/util/error.h"
#include "core/util/output_file.h"
#include "core/util/process.h"
#include "core/util/random.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <sstream>

namespace fs = std::filesystem;

namespace comera {
namespace {

// Reads file paths from stdin; prints one JSON line per file, in order: {"functions": [...]} or
// {"error": "..."}. Only functions and methods (not functions nested in functions) whose
// docstring stands on lines of its own and that have a body besides it.
constexpr const char* kExtractScript = R"PY(
import ast, json, sys, textwrap, tokenize, warnings
warnings.simplefilter("ignore")

def defs(body, prefix):
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield prefix + node.name, node
        elif isinstance(node, ast.ClassDef):
            yield from defs(node.body, prefix + node.name + ".")

def function(lines, name, node):
    doc = ast.get_docstring(node)
    if doc is None or len(node.body) < 2:
        return None
    first, second = node.body[0], node.body[1]
    if first.lineno == node.lineno or second.lineno == first.end_lineno:
        return None
    kept = lines[node.lineno - 1:first.lineno - 1] + lines[first.end_lineno:node.end_lineno]
    code = textwrap.dedent("\n".join(kept)).strip()
    return {"name": name, "line": node.lineno, "code": code, "doc": doc}

for path in sys.stdin.read().split("\n"):
    if not path:
        continue
    try:
        with tokenize.open(path) as f:
            text = f.read()
        tree = ast.parse(text, path)
    except (SyntaxError, ValueError, UnicodeError, OSError) as e:
        print(json.dumps({"error": type(e).__name__ + ": " + str(e)}), flush=True)
        continue
    lines = text.split("\n")
    found = [function(lines, name, node) for name, node in defs(tree.body, "")]
    print(json.dumps({"functions": [f for f in found if f]}), flush=True)
)PY";

// Only the first ~128 tokens of a pair are used; longer texts would only bloat the files.
constexpr size_t kMaxTextChars = 1000;
constexpr int64_t kMinDocWords = 3;
constexpr const char* kSplitNames[] = {"train", "dev", "test"};
constexpr const char kLabelLetters[] = {'e', 'n', 'c'};

bool skipped_dir(const std::string& name) {
  return name == "test" || name == "tests" || name == "idle_test" || name == "__pycache__" ||
         name == "site-packages" || name == "dist-packages" || name.rfind('.', 0) == 0;
}

std::vector<std::string> python_files(const fs::path& root) {
  if (!fs::is_directory(root))
    throw Error("Python source folder " + root.string() + " does not exist; pass --source DIR");
  std::vector<std::string> files;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    const std::string name = it->path().filename().string();
    if (it->is_directory()) {
      if (skipped_dir(name)) it.disable_recursion_pending();
    } else if (it->is_regular_file() && it->path().extension() == ".py" &&
               name.rfind("test_", 0) != 0) {
      files.push_back(fs::relative(it->path(), root).generic_string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string module_name(std::string relative) {
  relative.resize(relative.size() - 3);  // ".py"
  std::replace(relative.begin(), relative.end(), '/', '.');
  const std::string init = ".__init__";
  if (relative.size() > init.size() && relative.compare(relative.size() - init.size(),
                                                        init.size(), init) == 0)
    relative.resize(relative.size() - init.size());
  return relative;
}

std::string top_package(const std::string& module) { return module.substr(0, module.find('.')); }

// At most kMaxTextChars, cut at a line end when there is one, else at a UTF-8 boundary.
std::string clip(const std::string& text) {
  if (text.size() <= kMaxTextChars) return text;
  size_t cut = text.rfind('\n', kMaxTextChars);
  if (cut == std::string::npos || cut == 0) {
    cut = kMaxTextChars;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  }
  std::string out = text.substr(0, cut);
  out.erase(out.find_last_not_of(" \t\n") + 1);
  return out;
}

int64_t word_count(const std::string& text) {
  std::istringstream in(text);
  int64_t n = 0;
  for (std::string w; in >> w;) ++n;
  return n;
}

// The functions of one module that can serve (clipped texts), by their index in `functions`.
struct Module {
  std::string name;
  std::vector<size_t> functions;
  std::vector<size_t> anchors;  // the ones paired (all, or max_per_module of them)
};

struct Split {
  std::vector<size_t> modules;
  int64_t anchors = 0;
};

// Whole top-level packages go to one split: a split below 2 modules first (it could give no
// contradictions), else the one furthest below its share of the anchors.
std::array<Split, 3> assign_splits(const std::vector<Module>& modules,
                                   const std::array<double, 3>& shares, Rng& rng) {
  std::map<std::string, std::vector<size_t>> packages;
  for (size_t m = 0; m < modules.size(); ++m) packages[top_package(modules[m].name)].push_back(m);
  std::vector<const std::vector<size_t>*> order;
  for (const auto& entry : packages) order.push_back(&entry.second);
  rng.shuffle(order);
  std::array<Split, 3> splits;
  int64_t assigned = 0;
  for (const auto* package : order) {
    int64_t size = 0;
    for (size_t m : *package) size += static_cast<int64_t>(modules[m].anchors.size());
    size_t best = 0;
    double best_score = -1e300;
    for (size_t s = 0; s < 3; ++s) {
      if (shares[s] <= 0) continue;
      const double score = splits[s].modules.size() < 2
                               ? 1e300
                               : shares[s] * static_cast<double>(assigned + size) -
                                     static_cast<double>(splits[s].anchors);
      if (score > best_score) best = s, best_score = score;
    }
    splits[best].modules.insert(splits[best].modules.end(), package->begin(), package->end());
    splits[best].anchors += size;
    assigned += size;
  }
  return splits;
}

nlohmann::json split_json(const DocstringPairSplit& s) {
  return {{"file", s.file}, {"modules", s.modules}, {"functions", s.functions}, {"pairs", s.pairs},
          {"entailment", s.per_label[0]}, {"neutral", s.per_label[1]},
          {"contradiction", s.per_label[2]}};
}

}  // namespace

std::string default_python() {
  if (const char* env = std::getenv("COMERA_PYTHON"); env && *env) return env;
  return fs::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
}

PyExtraction extract_py_functions(const std::string& source_dir, const std::string& python,
                                  const std::function<void(int64_t, int64_t)>& progress) {
  PyExtraction out;
  out.source_dir = source_dir;
  const auto files = python_files(source_dir);
  out.files = static_cast<int64_t>(files.size());
  std::string input;
  for (const auto& f : files) input += (fs::path(source_dir) / f).string() + "\n";
  size_t done = 0;
  run_lines({python, "-I", "-c", kExtractScript}, input, [&](const std::string& line) {
    if (done >= files.size()) throw Error(python + " printed more results than files given");
    const auto row = nlohmann::json::parse(line);
    const std::string& file = files[done++];
    if (row.contains("error")) {
      out.failed.push_back(file + ": " + row["error"].get<std::string>());
    } else {
      for (const auto& f : row["functions"])
        out.functions.push_back(PyFunction{module_name(file), f["name"], f["line"], f["code"],
                                           f["doc"], file});
    }
    if (progress) progress(static_cast<int64_t>(done), out.files);
  }, python + " reading Python sources with its ast module");
  if (done != files.size())
    throw Error(python + " reported on " + std::to_string(done) + " of " +
                std::to_string(files.size()) + " files");
  return out;
}

PythonInfo python_info(const std::string& python) {
  std::vector<std::string> info;
  run_lines({python, "-I", "-c",
             "import sys, sysconfig; print(sys.version.split()[0]); "
             "print(sysconfig.get_path('stdlib'))"},
            "", [&](const std::string& line) { info.push_back(line); },
            "asking " + python + " for its version (set --python or COMERA_PYTHON)");
  if (info.size() != 2) throw Error(python + " did not report its version and stdlib");
  return {info[0], info[1]};
}

nlohmann::json DocstringPairSummary::to_json() const {
  return {{"source", source_dir}, {"python", python}, {"python_version", python_version},
          {"seed", seed}, {"max_per_module", max_per_module},
          {"train_negatives", train_negatives}, {"files", files},
          {"files_failed", files_failed}, {"functions", functions}, {"modules", modules},
          {"anchors_dropped", anchors_dropped}, {"train", split_json(train)},
          {"dev", split_json(dev)}, {"test", split_json(test)}};
}

DocstringPairSummary build_docstring_pairs(const DocstringPairOptions& options) {
  auto log = [&](const std::string& line) {
    if (options.log) options.log(line);
  };
  if (options.dev_fraction < 0 || options.test_fraction < 0 ||
      options.dev_fraction + options.test_fraction >= 1)
    throw Error("dev and test fractions must be >= 0 and leave room for train");
  if (options.max_per_module < 0) throw Error("max_per_module must be >= 0 (0 = all)");
  if (options.train_negatives < 1) throw Error("train_negatives must be >= 1");
  // The splits, then the summary: checked before any work, each written whole.
  std::vector<OutputFile> outputs;
  const auto output = [&](const std::string& name) {
    outputs.emplace_back((fs::path(options.out_dir) / name).string(), "--out",
                         std::vector<std::string>{});
  };
  for (const std::string split : kSplitNames) output(split + ".jsonl");
  output("summary.json");

  DocstringPairSummary summary;
  summary.python = options.python;
  summary.seed = options.seed;
  summary.max_per_module = options.max_per_module;
  summary.train_negatives = options.train_negatives;
  const auto info = python_info(options.python);
  summary.python_version = info.version;
  summary.source_dir = options.source_dir.empty() ? info.stdlib : options.source_dir;

  log("reading " + summary.source_dir + " with " + options.python + " " + summary.python_version);
  auto extraction = extract_py_functions(summary.source_dir, options.python,
                                         [&](int64_t done, int64_t total) {
    if (done % 100 == 0 || done == total)
      log("  parsed " + std::to_string(done) + "/" + std::to_string(total) + " files");
  });
  summary.files = extraction.files;
  summary.files_failed = static_cast<int64_t>(extraction.failed.size());
  for (const auto& f : extraction.failed) log("  skipped " + f);

  auto& functions = extraction.functions;
  for (auto& f : functions) {
    f.code = clip(f.code);
    f.doc = clip(f.doc);
  }
  std::vector<Module> modules;
  std::map<std::string, size_t> module_index;
  for (size_t i = 0; i < functions.size(); ++i) {
    if (word_count(functions[i].doc) < kMinDocWords) continue;
    ++summary.functions;
    auto [it, added] = module_index.emplace(functions[i].module, modules.size());
    if (added) modules.push_back(Module{functions[i].module, {}, {}});
    modules[it->second].functions.push_back(i);
  }
  modules.erase(std::remove_if(modules.begin(), modules.end(),
                               [](const Module& m) { return m.functions.size() < 2; }),
                modules.end());
  summary.modules = static_cast<int64_t>(modules.size());

  Rng rng(options.seed);
  for (auto& m : modules) {
    m.anchors = m.functions;
    if (options.max_per_module > 0 && static_cast<int64_t>(m.anchors.size()) > options.max_per_module) {
      rng.shuffle(m.anchors);
      m.anchors.resize(static_cast<size_t>(options.max_per_module));
      std::sort(m.anchors.begin(), m.anchors.end());
    }
  }
  const double train_share = 1 - options.dev_fraction - options.test_fraction;
  const auto splits =
      assign_splits(modules, {train_share, options.dev_fraction, options.test_fraction}, rng);

  DocstringPairSplit* results[] = {&summary.train, &summary.dev, &summary.test};
  int64_t prompt = 0;
  for (size_t s = 0; s < 3; ++s) {
    const Split& split = splits[s];
    DocstringPairSplit& result = *results[s];
    // A stream per split: dev and test do not depend on how many draws train makes.
    Rng split_rng(rng.below(std::numeric_limits<uint64_t>::max()));
    std::vector<size_t> pool;  // the docstrings this split may use as contradictions
    for (size_t m : split.modules) {
      const auto& fns = modules[m].functions;
      pool.insert(pool.end(), fns.begin(), fns.end());
    }
    std::vector<nlohmann::json> rows;
    for (size_t m : split.modules) {
      const Module& module = modules[m];
      for (size_t a : module.anchors) {
        const PyFunction& anchor = functions[a];
        std::vector<size_t> neutrals;
        for (size_t f : module.functions)
          if (functions[f].doc != anchor.doc) neutrals.push_back(f);
        const int64_t draws = s == 0 ? options.train_negatives : 1;
        std::vector<std::array<size_t, 3>> triples;
        auto used = [&](size_t f, size_t label) {
          for (const auto& t : triples)
            if (t[label] == f) return true;
          return false;
        };
        for (int64_t draw = 0; draw < draws && !neutrals.empty(); ++draw) {
          // Bounded tries: a pool whose other docstrings all equal this one gives none.
          int64_t contradiction = -1;
          for (int tries = 0; tries < 100 && contradiction < 0; ++tries) {
            const size_t f = pool[split_rng.below(pool.size())];
            if (functions[f].module != anchor.module && functions[f].doc != anchor.doc &&
                (!used(f, 2) || tries >= 10))
              contradiction = static_cast<int64_t>(f);
          }
          if (contradiction < 0) break;
          // Another neutral than the earlier draws' while there is one (a few tries).
          size_t neutral = neutrals[split_rng.below(neutrals.size())];
          for (int tries = 0; tries < 10 && used(neutral, 1); ++tries)
            neutral = neutrals[split_rng.below(neutrals.size())];
          triples.push_back({a, neutral, static_cast<size_t>(contradiction)});
        }
        if (triples.empty()) {
          ++summary.anchors_dropped;
          continue;
        }
        for (const auto& sources : triples) {
          const std::string prompt_id = std::to_string(prompt++);
          for (size_t label = 0; label < 3; ++label) {
            const PyFunction& doc = functions[sources[label]];
            const char* name = nli_label_name(static_cast<NliLabel>(label));
            rows.push_back({{"annotator_labels", {name}},
                            {"genre", top_package(anchor.module)},
                            {"gold_label", name},
                            {"pairID", prompt_id + kLabelLetters[label]},
                            {"promptID", prompt_id},
                            {"sentence1", anchor.code},
                            {"sentence2", doc.doc},
                            {"function", anchor.module + ":" + anchor.name},
                            {"docstring_of", doc.module + ":" + doc.name}});
            ++result.per_label[label];
          }
        }
        ++result.functions;
      }
    }
    split_rng.shuffle(rows);
    result.file = outputs[s].path();
    result.modules = static_cast<int64_t>(split.modules.size());
    result.pairs = static_cast<int64_t>(rows.size());
    outputs[s].write_text([&](std::ostream& out) {
      for (const auto& row : rows) out << row.dump() << '\n';
    });
    log(std::string(kSplitNames[s]) + ": " + std::to_string(result.pairs) + " pairs from " +
        std::to_string(result.functions) + " functions in " + std::to_string(result.modules) +
        " modules -> " + result.file);
  }
  outputs[3].write_text([&](std::ostream& out) { out << summary.to_json().dump(2) << '\n'; });
  return summary;
}

}  // namespace comera
