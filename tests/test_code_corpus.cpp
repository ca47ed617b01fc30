// The code corpus builder on tests/fixtures/codesrc (one small tree per language, Java as a zip
// made by Python's zipfile) and tests/fixtures/pysrc: the functions and doc comments each
// extractor finds, written down by hand from the fixtures; duplicates dropped; the split by file
// deterministic; the output read back by the CodeSearchNet reader.
#include "dataprep/code_corpus.h"
#include "dataprep/code_extractors.h"
#include "core/data/codesearchnet.h"
#include "core/util/error.h"
#include "core/util/source_dir.h"
#include "dataprep/zip_reader.h"
#include "tests/support/catch.h"
#include "tests/support/temp_dir.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

using namespace comera;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

const std::string kFixtures = comera::source_dir() + "/tests/fixtures/codesrc";

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// name -> doc of what the extractor finds.
std::map<std::string, std::string> found(const std::string& language, const std::string& source) {
  std::map<std::string, std::string> out;
  for (const auto& f : extract_functions(language, source)) out[f.name] = f.doc;
  return out;
}

std::vector<CodeSource> fixture_sources() {
  return {{"go", kFixtures + "/go", "fixture-go"},
          {"java", kFixtures + "/java.zip", "fixture-java"},
          {"javascript", kFixtures + "/javascript", "fixture-js"},
          {"php", kFixtures + "/php", "fixture-php"},
          {"ruby", kFixtures + "/ruby", "fixture-ruby"},
          {"python", comera::source_dir() + "/tests/fixtures/pysrc", "fixture-py"}};
}

}  // namespace

TEST_CASE("each language's extractor finds the functions and doc comments", "[code_corpus]") {
  using Docs = std::map<std::string, std::string>;
  CHECK(found("go", read_file(kFixtures + "/go/mathx/max.go")) ==
        Docs{{"Max", "Max returns the larger of a and b.\nTies return a."},
             {"abs", ""},
             {"Range.Clamp", "Clamp keeps v within [lo, hi]."},
             {"Short", "Short is one line."},
             {"TestMax", "TestMax is named like a test and left out."}});
  const auto go = extract_functions("go", read_file(kFixtures + "/go/mathx/max.go"));
  REQUIRE(go.size() == 5);
  CHECK(go[2].line == 21);
  CHECK(go[2].code == "func (r *Range) Clamp(v int) int {\n\ts := \"{\"\n\tif v < r.lo {\n\t\treturn r.lo\n\t}\n"
                      "\treturn min(v, r.hi)\n}");

  const ZipReader zip(kFixtures + "/java.zip");
  REQUIRE(zip.entries().size() == 3);
  CHECK(zip.entries()[1].name == "java.base/util/Shapes.java");
  const auto java_source = zip.read(zip.entries()[1]);
  CHECK(java_source.rfind("package util;\n", 0) == 0);
  CHECK(zip.read(zip.entries()[2]) == "class Stored {\n    int one() {\n        return 1;\n    }\n}\n");
  // perimeter is abstract (no body); the class's own comment belongs to no function.
  CHECK(found("java", java_source) == Docs{{"circleArea", "Area of a circle.\n@param r the radius"},
                                           {"toString", ""},
                                           {"count", ""},
                                           {"Shapes", ""}});

  const auto js = found("javascript", read_file(kFixtures + "/javascript/lib/strings.js"));
  CHECK(js == Docs{{"repeat", "Repeat a string n times."},
                   {"capitalize", "Upper-case the first letter."},
                   {"joinAll", "Join with commas."},
                   {"greet", ""}});
  const auto js_functions = extract_functions("javascript", read_file(kFixtures + "/javascript/lib/strings.js"));
  CHECK(js_functions[1].code == "exports.capitalize = function (s) {\n  if (!s) { return s; }\n"
                                "  return s.charAt(0).toUpperCase() + s.slice(1);\n}");

  // render is abstract; an attribute may stand between a doc comment and its function.
  CHECK(found("php", read_file(kFixtures + "/php/src/Cart.php")) ==
        Docs{{"add", "Add an item to the cart.\n\n@param string $name"},
             {"total", ""},
             {"testCount", "Count items."},
             {"helper", ""}});

  // One-line and endless definitions have no body of their own.
  CHECK(found("ruby", read_file(kFixtures + "/ruby/lib/text.rb")) ==
        Docs{{"self.shout", "Shout the words.\nAdds an exclamation mark."},
             {"whisper", ""},
             {"test_shout", ""}});

  CHECK_THROWS_WITH(extract_functions("cobol", "x"), Contains("no function extractor"));
}

TEST_CASE("code and doc tokens", "[code_corpus]") {
  CHECK(code_tokens("go", "func F(s string) int { // note\n\treturn len(\"a b\") /* x */ + 1\n}") ==
        std::vector<std::string>{"func", "F", "(", "s", "string", ")", "int", "{", "return", "len", "(",
                                 "\"a b\"", ")", "+", "1", "}"});
  // Python and Ruby comments start with '#'; Python's // is floor division.
  CHECK(code_tokens("python", "x = a // b  # half") == std::vector<std::string>{"x", "=", "a", "/", "/", "b"});
  CHECK(doc_tokens("Add an item, twice.\nMore here.\n\n@param x ignored") ==
        std::vector<std::string>{"Add", "an", "item", ",", "twice", ".", "More", "here", "."});
  CHECK(doc_tokens("Shout.\n@return words") == std::vector<std::string>{"Shout", "."});
}

TEST_CASE("the split is a deterministic hash of the file", "[code_corpus]") {
  std::map<std::string, int64_t> counts;
  for (int i = 0; i < 20000; ++i) ++counts[corpus_split("pkg/file" + std::to_string(i) + ".go", 0.1, 0.2)];
  // 20,000 files: each share within 5 standard deviations (at most 0.0142).
  CHECK(std::abs(counts["valid"] / 20000.0 - 0.1) < 0.011);
  CHECK(std::abs(counts["test"] / 20000.0 - 0.2) < 0.015);
  CHECK(corpus_split("a/b.go", 0.1, 0.1) == corpus_split("a/b.go", 0.1, 0.1));
  CHECK(corpus_split("a/b.go", 0, 0) == "train");
}

TEST_CASE("the code corpus is built in CodeSearchNet's layout and read back", "[code_corpus]") {
  comera::testing::TempDir temp;
  CodeCorpusOptions o;
  o.sources = fixture_sources();
  o.out_dir = temp.file("corpus");
  // Every file in train, so that the counts do not depend on the hash.
  o.valid_fraction = 0;
  o.test_fraction = 0;
  std::vector<std::string> lines;
  o.log = [&](const std::string& line) { lines.push_back(line); };
  const auto summary = build_code_corpus(o);

  const auto& go = summary.languages.at("go");
  CHECK(go.files == 2);  // max_test.go is not read
  CHECK(go.found == 6);
  CHECK(go.filtered == 2);    // Short (one line), TestMax (a test's name)
  CHECK(go.duplicates == 1);  // abs again in copy.go
  CHECK(go.records.at("train") == 3);
  CHECK(go.documented.at("train") == 2);
  CHECK(summary.languages.at("java").records.at("train") == 5);
  CHECK(summary.languages.at("javascript").files == 1);  // not strings.min.js
  CHECK(summary.languages.at("javascript").records.at("train") == 4);
  CHECK(summary.languages.at("php").records.at("train") == 3);  // testCount left out
  CHECK(summary.languages.at("ruby").records.at("train") == 2);
  for (const auto& [language, l] : summary.languages) {
    INFO(language);
    CHECK(l.skipped.empty());
    CHECK(l.records.at("valid") == 0);
    CHECK(l.records.at("test") == 0);
  }

  const auto back = read_codesearchnet(o.out_dir, "train", {"go"});
  REQUIRE(back.size() == 3);
  CHECK(back[0].func_name == "abs");  // copy.go comes first in path order
  CHECK(back[0].path == "mathx/copy.go");
  CHECK(back[0].repo == "fixture-go");
  CHECK(back[0].language == "go");
  CHECK(back[0].partition == "train");
  CHECK(back[1].func_name == "Max");
  CHECK(back[1].docstring == "Max returns the larger of a and b.\nTies return a.");
  CHECK(back[1].docstring_tokens.size() == 13);
  CHECK(back[1].code_tokens.front() == "func");
  CHECK(back[2].func_name == "Range.Clamp");

  // Python through its own parser: the docstring is taken out of the code.
  const auto py = read_codesearchnet(o.out_dir, "train", {"python"});
  bool seen = false;
  for (const auto& f : py) {
    if (f.func_name != "circle_area") continue;
    seen = true;
    CHECK(f.docstring == "Return the area of a circle with the given radius.");
    CHECK(f.path == "geometry.py");
    CHECK(f.code.find("Return the area") == std::string::npos);
  }
  CHECK(seen);
  const auto summary_json = nlohmann::json::parse(read_file(o.out_dir + "/summary.json"));
  CHECK(summary_json["languages"]["go"]["records"]["train"] == 3);

  // Rebuilt with a split: the same files again, byte for byte, and no stale shard left over.
  const auto first = read_file(o.out_dir + "/go/final/jsonl/train/go_train_0.jsonl.gz");
  build_code_corpus(o);
  CHECK(read_file(o.out_dir + "/go/final/jsonl/train/go_train_0.jsonl.gz") == first);
  o.records_per_file = 1;
  build_code_corpus(o);
  CHECK(fs::exists(o.out_dir + "/go/final/jsonl/train/go_train_2.jsonl.gz"));
  o.records_per_file = 30000;
  build_code_corpus(o);
  CHECK_FALSE(fs::exists(o.out_dir + "/go/final/jsonl/train/go_train_1.jsonl.gz"));
  CHECK(read_codesearchnet(o.out_dir, "train", {"go"}).size() == 3);

  // Functions of one file share its split.
  o.valid_fraction = 0.4;
  o.test_fraction = 0.4;
  build_code_corpus(o);
  std::map<std::string, std::set<std::string>> split_of_file;
  for (const auto& split : codesearchnet_splits())
    for (const auto& f : read_codesearchnet(o.out_dir, split, {"go", "javascript"}))
      split_of_file[f.path].insert(f.partition);
  for (const auto& [file, splits] : split_of_file) {
    INFO(file);
    CHECK(splits.size() == 1);
    CHECK(*splits.begin() == corpus_split((file == "lib/strings.js" ? "fixture-js/" : "fixture-go/") + file, 0.4, 0.4));
  }
}

TEST_CASE("the code corpus refuses what it cannot build, before any work", "[code_corpus]") {
  comera::testing::TempDir temp;
  CodeCorpusOptions o;
  o.out_dir = temp.file("corpus");
  o.sources = {{"go", temp.file("no-go"), "golang-1.19-src"}};
  o.languages = {"go"};
  o.require_all = true;
  CHECK_THROWS_WITH(build_code_corpus(o), Contains("install golang-1.19-src") && Contains("--source go="));
  CHECK_FALSE(fs::exists(o.out_dir));
  // Not asked for by name: skipped and said so.
  o.require_all = false;
  const auto summary = build_code_corpus(o);
  CHECK_THAT(summary.languages.at("go").skipped, Contains("not found"));
  o.languages = {"cobol"};
  CHECK_THROWS_WITH(build_code_corpus(o), Contains("unknown language 'cobol'"));
  o.languages = {"go"};
  o.sources = {{"go", kFixtures + "/go", "fixture"}};
  o.out_dir = kFixtures + "/go/out";
  CHECK_THROWS_WITH(build_code_corpus(o), Contains("overlaps the source"));
  o.out_dir = temp.file("corpus");
  o.valid_fraction = 0.6;
  o.test_fraction = 0.5;
  CHECK_THROWS_WITH(build_code_corpus(o), Contains("leave room for train"));
}

TEST_CASE("zip archives through libzip: zip64 entries read, damaged archives named", "[code_corpus]") {
  // Written by Python's zipfile with force_zip64: its entry carries zip64 sizes.
  const ZipReader zip64(kFixtures + "/zip64.zip");
  REQUIRE(zip64.entries().size() == 1);
  CHECK(zip64.entries()[0].name == "big/One.java");
  CHECK(zip64.read(zip64.entries()[0]) == "class One {}\n");

  comera::testing::TempDir temp;
  const auto whole = read_file(kFixtures + "/java.zip");
  const auto cut = temp.file("cut.zip"), text = temp.file("notes.zip");
  std::ofstream(cut, std::ios::binary) << whole.substr(0, whole.size() / 2);
  std::ofstream(text) << "not an archive\n";
  for (const auto& bad : {cut, text})
    CHECK_THROWS_WITH(ZipReader(bad), Catch::Matchers::Contains(bad) &&
                                          Catch::Matchers::Contains("is not a zip archive that can be read"));
  CHECK_THROWS_WITH(ZipReader(temp.file("missing.zip")), Catch::Matchers::Contains("missing.zip"));
  // A damaged member's data: its CRC no longer matches.
  auto flipped = whole;
  const auto at = flipped.find("package util;");
  const ZipReader original(kFixtures + "/java.zip");
  if (at != std::string::npos) {
    flipped[at] ^= 0x20;  // a stored entry: flip a byte of its text
  } else {
    flipped[flipped.size() / 3] ^= 0x55;
  }
  const auto damaged = temp.file("damaged.zip");
  std::ofstream(damaged, std::ios::binary) << flipped;
  const ZipReader reader(damaged);
  bool refused = false;
  for (const auto& e : reader.entries()) {
    try {
      reader.read(e);
    } catch (const comera::Error& error) {
      refused = true;
      CHECK_THAT(std::string(error.what()), Catch::Matchers::Contains(damaged) && Catch::Matchers::Contains(e.name));
    }
  }
  CHECK(refused);
}
