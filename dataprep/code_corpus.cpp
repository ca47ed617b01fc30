#include "dataprep/code_corpus.h"

#include "dataprep/code_extractors.h"
#include "core/data/codesearchnet.h"
#include "core/util/error.h"
#include "core/util/gzip_lines.h"
#include "core/util/output_file.h"
#include "dataprep/zip_reader.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <unordered_map>

namespace comera {

namespace fs = std::filesystem;

namespace {

const std::map<std::string, std::string>& extensions() {
  static const std::map<std::string, std::string> e{
      {"go", ".go"}, {"java", ".java"}, {"javascript", ".js"}, {"php", ".php"}, {"ruby", ".rb"}};
  return e;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Source files of `language` worth reading: not tests, test data or minified code.
bool wanted(const std::string& language, const std::string& relative) {
  if (!ends_with(relative, extensions().at(language)) || ends_with(relative, "_test.go") ||
      ends_with(relative, ".min.js"))
    return false;
  static const std::set<std::string> skipped{"test", "tests", "testdata", "__tests__", "spec"};
  std::stringstream parts(relative);
  for (std::string part; std::getline(parts, part, '/');)
    if (skipped.count(part)) return false;
  return true;
}

int64_t line_count(const std::string& code) {
  return 1 + static_cast<int64_t>(std::count(code.begin(), code.end(), '\n'));
}

bool test_like(std::string name) {
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  return name.find("test") != std::string::npos;
}

CodeFunction record(const std::string& language, const std::string& package, const std::string& path,
                    const std::string& name, const std::string& code, const std::string& doc) {
  CodeFunction f;
  f.repo = package;
  f.path = path;
  f.func_name = name;
  f.original_string = code;
  f.language = language;
  f.code = code;
  f.code_tokens = code_tokens(language, code);
  f.docstring = doc;
  f.docstring_tokens = doc_tokens(doc);
  return f;
}

// The functions of one language's sources, in source then path order, before filtering.
std::vector<CodeFunction> read_language(const std::string& language, const std::vector<CodeSource>& sources,
                                        const CodeCorpusOptions& o, CodeCorpusLanguage& counts) {
  const auto log = [&](const std::string& line) {
    if (o.log) o.log(line);
  };
  std::vector<CodeFunction> functions;
  for (const auto& source : sources) {
    counts.sources.push_back(source.package + ": " + source.path);
    if (language == "python") {
      log("python: reading " + source.path + " with " + o.python + "'s ast module");
      const auto py = extract_py_functions(source.path, o.python, [&](int64_t done, int64_t total) {
        if (done % 200 == 0 || done == total)
          log("  python: " + std::to_string(done) + "/" + std::to_string(total) + " files");
      });
      counts.files += py.files;
      counts.files_failed += static_cast<int64_t>(py.failed.size());
      for (const auto& f : py.functions)
        functions.push_back(record(language, source.package, f.file, f.name, f.code, f.doc));
      continue;
    }
    // A folder's files, or a zip archive's entries, in path order.
    std::vector<std::string> files;
    std::unique_ptr<ZipReader> zip;
    std::map<std::string, const ZipReader::Entry*> entries;
    if (ends_with(source.path, ".zip")) {
      zip = std::make_unique<ZipReader>(source.path);
      for (const auto& e : zip->entries())
        if (wanted(language, e.name)) entries[e.name] = &e;
      for (const auto& [name, e] : entries) files.push_back(name);
    } else {
      for (auto it = fs::recursive_directory_iterator(source.path); it != fs::recursive_directory_iterator(); ++it) {
        if (!it->is_regular_file()) continue;
        const auto relative = fs::relative(it->path(), source.path).generic_string();
        if (wanted(language, relative)) files.push_back(relative);
      }
      std::sort(files.begin(), files.end());
    }
    if (o.max_files > 0 && static_cast<int64_t>(files.size()) > o.max_files - counts.files)
      files.resize(static_cast<size_t>(std::max<int64_t>(0, o.max_files - counts.files)));
    log(language + ": " + std::to_string(files.size()) + " files from " + source.package + " (" + source.path + ")");
    for (size_t i = 0; i < files.size(); ++i) {
      std::string text;
      if (zip) {
        text = zip->read(*entries.at(files[i]));
      } else {
        std::ifstream in(fs::path(source.path) / files[i], std::ios::binary);
        std::ostringstream buffer;
        buffer << in.rdbuf();
        if (!in) {
          ++counts.files_failed;
          continue;
        }
        text = buffer.str();
      }
      ++counts.files;
      for (const auto& f : extract_functions(language, text))
        functions.push_back(record(language, source.package, files[i], f.name, f.code, f.doc));
      if ((i + 1) % 1000 == 0) log("  " + language + ": " + std::to_string(i + 1) + "/" + std::to_string(files.size()) + " files");
    }
  }
  return functions;
}

void write_shards(const std::string& out_dir, const std::string& language, const std::string& split,
                  const std::vector<const CodeFunction*>& records, int64_t per_file,
                  const std::vector<std::string>& reads) {
  const fs::path dir = fs::path(out_dir) / language / "final" / "jsonl" / split;
  const size_t shards = std::max<size_t>(1, (records.size() + static_cast<size_t>(per_file) - 1) / static_cast<size_t>(per_file));
  for (size_t k = 0; k < shards; ++k) {
    std::string text;
    for (size_t i = k * static_cast<size_t>(per_file); i < std::min(records.size(), (k + 1) * static_cast<size_t>(per_file)); ++i)
      text += records[i]->to_json().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    const auto path = (dir / (language + "_" + split + "_" + std::to_string(k) + ".jsonl.gz")).string();
    OutputFile(path, "--out", reads).write([&](const std::string& temp) { write_gzip(temp, text); });
  }
  // Shards of an earlier, larger build would be read with these.
  const std::regex shard(language + "_" + split + "_([0-9]+)\\.jsonl(\\.gz)?");
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::smatch m;
    const auto name = entry.path().filename().string();
    if (std::regex_match(name, m, shard) && (m[2].matched == false || std::stoull(m[1].str()) >= shards))
      fs::remove(entry.path());
  }
}

}  // namespace

std::vector<CodeSource> default_code_sources() {
  return {{"python", "", "libpython3.11-stdlib"},
          {"go", "/usr/share/go-1.19/src", "golang-1.19-src"},
          {"java", "/usr/lib/jvm/openjdk-17/lib/src.zip", "openjdk-17-source"},
          {"javascript", "/usr/share/nodejs/lodash", "node-lodash"},
          {"javascript", "/usr/share/nodejs/underscore", "node-underscore"},
          {"javascript", "/usr/share/nodejs/async", "node-async"},
          {"php", "/usr/share/php/Twig", "php-twig"},
          {"php", "/usr/share/php/Monolog", "php-monolog"},
          {"php", "/usr/share/php/Symfony/Component/Console", "php-symfony-console"},
          {"ruby", "/usr/lib/ruby/3.1.0", "libruby3.1"}};
}

std::string corpus_split(const std::string& key, double valid_fraction, double test_fraction) {
  uint64_t h = 1469598103934665603ull;
  for (const unsigned char c : key) h = (h ^ c) * 1099511628211ull;
  const double u = static_cast<double>(h >> 11) / static_cast<double>(uint64_t{1} << 53);
  return u < test_fraction ? "test" : u < test_fraction + valid_fraction ? "valid" : "train";
}

nlohmann::json CodeCorpusLanguage::to_json() const {
  nlohmann::json j = {{"sources", sources}, {"files", files}, {"files_failed", files_failed},
                      {"functions_found", found}, {"filtered", filtered}, {"duplicates", duplicates},
                      {"records", records}, {"documented", documented}};
  if (!skipped.empty()) j["skipped"] = skipped;
  return j;
}

nlohmann::json CodeCorpusSummary::to_json() const {
  nlohmann::json langs = nlohmann::json::object();
  for (const auto& [name, l] : languages) langs[name] = l.to_json();
  return {{"out_dir", out_dir}, {"valid_fraction", valid_fraction}, {"test_fraction", test_fraction},
          {"languages", langs}};
}

CodeCorpusSummary build_code_corpus(const CodeCorpusOptions& o) {
  if (o.valid_fraction < 0 || o.test_fraction < 0 || o.valid_fraction + o.test_fraction >= 1)
    throw Error("valid and test fractions must be >= 0 and leave room for train");
  if (o.records_per_file < 1) throw Error("records per file must be at least 1");
  const auto& known = codesearchnet_languages();
  for (const auto& l : o.languages)
    if (std::find(known.begin(), known.end(), l) == known.end())
      throw Error("unknown language '" + l + "' (go, java, javascript, php, python, ruby)");
  const auto all_sources = o.sources.empty() ? default_code_sources() : o.sources;
  for (const auto& s : all_sources)
    if (std::find(known.begin(), known.end(), s.language) == known.end())
      throw Error("a source for unknown language '" + s.language + "' (go, java, javascript, php, python, ruby)");
  const auto languages = o.languages.empty() ? known : o.languages;
  const bool strict = o.require_all && !o.languages.empty();

  // Resolve the sources and check them before any work.
  std::map<std::string, std::vector<CodeSource>> by_language;
  std::vector<std::string> reads;
  CodeCorpusSummary summary;
  summary.out_dir = o.out_dir;
  summary.valid_fraction = o.valid_fraction;
  summary.test_fraction = o.test_fraction;
  for (const auto& language : languages) {
    std::vector<std::string> missing;
    for (auto s : all_sources) {
      if (s.language != language) continue;
      if (s.language == "python" && s.path.empty()) s.path = python_info(o.python).stdlib;
      if (fs::exists(s.path)) {
        reads.push_back(s.path);
        by_language[language].push_back(s);
      } else {
        missing.push_back(s.path + " (install " + s.package + ")");
      }
    }
    if (by_language[language].empty()) {
      std::string why = missing.empty() ? "no source given" : "not found: ";
      for (size_t i = 0; i < missing.size(); ++i) why += (i ? ", " : "") + missing[i];
      if (strict)
        throw Error(language + ": " + why + " (run bash scripts/setup.sh --code-sources, or pass --source " +
                    language + "=DIR)");
      summary.languages[language].skipped = why;
      if (o.log) o.log(language + ": skipped, " + why + " (bash scripts/setup.sh --code-sources installs them)");
    }
  }
  for (const auto& r : reads) {
    const auto out = fs::weakly_canonical(o.out_dir).string() + "/", in = fs::weakly_canonical(r).string() + "/";
    if (out.rfind(in, 0) == 0 || in.rfind(out, 0) == 0)
      throw Error("--out " + o.out_dir + " overlaps the source " + r + " (write the corpus elsewhere)");
  }
  const OutputFile summary_file((fs::path(o.out_dir) / "summary.json").string(), "--out", reads);

  for (const auto& [language, sources] : by_language) {
    if (sources.empty()) continue;
    auto& counts = summary.languages[language];
    auto functions = read_language(language, sources, o, counts);
    counts.found = static_cast<int64_t>(functions.size());
    std::map<std::string, std::vector<const CodeFunction*>> splits;
    std::unordered_map<size_t, std::vector<const CodeFunction*>> seen;  // code hash -> kept
    for (auto& f : functions) {
      // Python's code comes without its docstring: its functions, docstring and body, have 3.
      if ((language != "python" && line_count(f.code) < 3) || test_like(f.func_name)) {
        ++counts.filtered;
        continue;
      }
      auto& same_hash = seen[std::hash<std::string>{}(f.code)];
      if (std::any_of(same_hash.begin(), same_hash.end(), [&](const CodeFunction* g) { return g->code == f.code; })) {
        ++counts.duplicates;
        continue;
      }
      same_hash.push_back(&f);
      f.partition = corpus_split(f.repo + "/" + f.path, o.valid_fraction, o.test_fraction);
      splits[f.partition].push_back(&f);
    }
    for (const auto& split : codesearchnet_splits()) {
      const auto& records = splits[split];
      counts.records[split] = static_cast<int64_t>(records.size());
      counts.documented[split] = std::count_if(records.begin(), records.end(),
                                               [](const CodeFunction* f) { return !f->docstring.empty(); });
      write_shards(o.out_dir, language, split, records, o.records_per_file, reads);
    }
    if (o.log)
      o.log(language + ": " + std::to_string(counts.records["train"]) + " train, " +
            std::to_string(counts.records["valid"]) + " valid, " + std::to_string(counts.records["test"]) +
            " test functions (" + std::to_string(counts.duplicates) + " duplicates, " +
            std::to_string(counts.filtered) + " short or test-named left out)");
  }
  summary_file.write_text([&](std::ostream& out) { out << summary.to_json().dump(2) << '\n'; });
  return summary;
}

}  // namespace comera
