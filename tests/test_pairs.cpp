// The code/docstring pair task on tests/fixtures/pysrc, checked against hand-made tables of which
// docstring belongs to which function and module, read back through the MNLI JSONL reader.
#include "dataprep/docstring_pairs.h"
#include "core/data/mnli.h"
#include "core/util/error.h"
#include "core/util/remove_tree.h"
#include "core/util/source_dir.h"
#include "tests/support/catch.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

using namespace comera;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

const std::string kSource = comera::source_dir() + "/tests/fixtures/pysrc";

// Written by hand from the fixture files: function -> (module, cleaned docstring).
const std::map<std::string, std::pair<std::string, std::string>> kDocs = {
    {"circle_area", {"geometry", "Return the area of a circle with the given radius."}},
    {"square_perimeter",
     {"geometry", "Compute the perimeter of a square from its side length.\n\nNegative sides are rejected."}},
    {"diagonal", {"geometry", "Length of the line between opposite corners of the rectangle."}},
    {"rgb_to_hex", {"colors", "Format three channel values as a hexadecimal colour string."}},
    {"hex_to_rgb", {"colors", "Parse a hexadecimal colour string into three channel values."}},
    {"blend", {"colors", "Mix two colours channel by channel with the given weight."}},
    {"add_item", {"inventory", "Put count units of the named item into the stock."}},
    {"remove_item", {"inventory", "Take count units of the named item out of the stock."}},
    {"total_units", {"inventory", "Add up how many units of all items are in the stock."}},
    {"is_leap_year", {"calendar_math", "Tell whether the Gregorian year has a February 29th."}},
    {"days_in_month", {"calendar_math", "Number of days in the month of the given year."}},
    {"fetch_holidays", {"calendar_math", "Ask the remote service for the public holidays of a year."}},
    {"celsius_to_fahrenheit", {"units", "Convert a temperature from Celsius to Fahrenheit degrees."}},
    {"miles_to_km", {"units", "Convert a distance in miles to kilometres."}},
    {"menu_name", {"cafe", "Return the caf\u00E9 menu name of a dish."}},
    {"menu_price", {"cafe", "Look up the price of a dish on the menu."}},
    {"normalize_spaces", {"textutil", "Collapse runs of whitespace in the text into single spaces."}},
    {"count_vowels", {"textutil", "Count how many vowels the text contains."}},
    {"wrap_words", {"textutil.wrap", "Break the text into lines no longer than width characters."}},
    {"indent_lines", {"textutil.wrap", "Put the prefix in front of every line."}},
};

// "def name(" or "async def name(" on the first line of the code.
std::string function_of(const std::string& code) {
  const size_t def = code.find("def ") + 4, paren = code.find('(');
  return code.substr(def, paren - def);
}

std::string owner_of(const std::string& doc) {
  for (const auto& [name, entry] : kDocs)
    if (entry.second == doc) return name;
  return "";
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// One build in a temporary folder, removed again afterwards.
struct Built {
  std::string dir;
  DocstringPairSummary summary;
  std::map<std::string, std::vector<PairExample>> splits;
  ~Built() { remove_tree(dir); }
};

Built build(uint64_t seed, const std::string& tag, int64_t train_negatives = 1) {
  DocstringPairOptions o;
  o.train_negatives = train_negatives;
  o.source_dir = kSource;
  o.out_dir = (fs::temp_directory_path() /
               ("comera_test_pairs_" + std::to_string(::getpid()) + "_" + tag)).string();
  o.seed = seed;
  o.dev_fraction = o.test_fraction = 0.2;
  auto summary = build_docstring_pairs(o);
  std::map<std::string, std::vector<PairExample>> splits;
  for (const char* split : {"train", "dev", "test"})
    splits[split] = read_mnli_jsonl(o.out_dir + "/" + split + ".jsonl");
  return Built{o.out_dir, std::move(summary), std::move(splits)};
}

}  // namespace

TEST_CASE("python3's ast extracts code without docstrings, methods and odd files", "[pairs]") {
  auto x = extract_py_functions(kSource, default_python());
  CHECK(x.files == 10);  // tests/test_skipped.py is not read
  REQUIRE(x.failed.size() == 1);
  CHECK_THAT(x.failed[0], Contains("broken.py: SyntaxError"));
  std::map<std::string, PyFunction> by_name;
  for (const auto& f : x.functions) by_name[f.module + ":" + f.name] = f;
  CHECK(by_name.count("geometry:undocumented") == 0);
  CHECK(by_name.count("geometry:stub_only") == 0);  // nothing besides its docstring
  CHECK(by_name.count("geometry:terse") == 1);      // extracted; the builder drops 2-word docs
  const auto& area = by_name.at("geometry:circle_area");
  CHECK(area.code == "def circle_area(radius):\n    return math.pi * radius ** 2");
  CHECK(area.line == 5);
  // No decorator line, cleaned multi-line docstring.
  CHECK(by_name.at("geometry:square_perimeter").code ==
        "def square_perimeter(side):\n    if side < 0:\n        raise ValueError(\"negative "
        "side\")\n    return 4 * side");
  CHECK(by_name.at("geometry:square_perimeter").doc == kDocs.at("square_perimeter").second);
  // A method, dedented; a multi-line signature kept whole.
  CHECK(by_name.at("geometry:Rectangle.diagonal").code ==
        "def diagonal(self):\n    return math.hypot(self.width, self.height)");
  CHECK(by_name.at("colors:blend").code.rfind("def blend(first, second,\n          weight=0.5):\n",
                                               0) == 0);
  CHECK(by_name.at("calendar_math:fetch_holidays").code.rfind("async def fetch_holidays", 0) == 0);
  // Declared latin-1 source arrives as UTF-8.
  CHECK(by_name.at("cafe:menu_name").doc == "Return the caf\u00E9 menu name of a dish.");
  CHECK(by_name.count("textutil:normalize_spaces") == 1);  // package __init__ is the package
  CHECK(by_name.count("textutil.wrap:wrap_words") == 1);
}

TEST_CASE("every pair's label follows from who wrote the docstring", "[pairs]") {
  const int64_t negatives = GENERATE(1, 3);
  INFO("train_negatives " << negatives);
  const auto b = build(3, "a" + std::to_string(negatives), negatives);
  CHECK(b.summary.files == 10);
  CHECK(b.summary.files_failed == 1);
  CHECK(b.summary.functions == 21);  // the 20 above and lonely's only function
  CHECK(b.summary.modules == 8);     // lonely has no second function for a neutral
  CHECK(b.summary.anchors_dropped == 0);

  std::map<std::string, std::string> split_of_module;
  std::set<std::string> anchors;
  for (const auto& [split, examples] : b.splits) {
    std::array<int64_t, 3> counts{};
    for (const auto& e : examples) {
      const std::string code_fn = function_of(e.sentence1), doc_fn = owner_of(e.sentence2);
      INFO(split << ": " << code_fn << " <- " << e.sentence2);
      REQUIRE(kDocs.count(code_fn) == 1);
      REQUIRE(!doc_fn.empty());
      const std::string& code_module = kDocs.at(code_fn).first;
      const std::string& doc_module = kDocs.at(doc_fn).first;
      const NliLabel expected = doc_fn == code_fn              ? NliLabel::kEntailment
                                : doc_module == code_module ? NliLabel::kNeutral
                                                             : NliLabel::kContradiction;
      CHECK(e.label == expected);
      CHECK(e.sentence1.find(e.sentence2) == std::string::npos);  // docstring cut out
      CHECK(e.pair_id.back() == "enc"[static_cast<int>(e.label)]);
      ++counts[static_cast<size_t>(e.label)];
      // Split by module: code and docstrings of a module stay in one split.
      for (const auto& module : {code_module, doc_module}) {
        auto [it, added] = split_of_module.emplace(module, split);
        CHECK(it->second == split);
      }
      anchors.insert(code_fn);
    }
    CHECK(counts[0] == counts[1]);
    CHECK(counts[1] == counts[2]);
    CHECK(!examples.empty());
  }
  CHECK(anchors.size() == kDocs.size());  // every usable function anchors once
  CHECK(split_of_module.at("textutil") == split_of_module.at("textutil.wrap"));  // one package
}

TEST_CASE("more training negatives: each training function thrice, other docstrings where the "
          "module has them; dev and test unchanged", "[pairs]") {
  const auto one = build(3, "k1"), three = build(3, "k3", 3);
  CHECK(three.splits.at("train").size() == 3 * one.splits.at("train").size());
  CHECK(three.summary.train.functions == one.summary.train.functions);
  for (const std::string split : {"dev", "test"}) {
    auto pairs = [&](const Built& b) {
      std::multiset<std::string> out;
      for (const auto& e : b.splits.at(split)) out.insert(e.sentence1 + "\t" + e.sentence2);
      return out;
    };
    CHECK(pairs(one) == pairs(three));
  }
  // Per training function: 3 entailments, and at least as many distinct neutral and
  // contradiction docstrings as with one draw, more wherever the pool allows.
  std::map<std::string, std::array<std::set<std::string>, 3>> seen;
  std::map<std::string, int64_t> entailments;
  for (const auto& e : three.splits.at("train")) {
    const auto fn = function_of(e.sentence1);
    seen[fn][static_cast<size_t>(e.label)].insert(e.sentence2);
    entailments[fn] += e.label == NliLabel::kEntailment;
  }
  bool more = false;
  for (const auto& [fn, docs] : seen) {
    CHECK(entailments[fn] == 3);
    CHECK(docs[0].size() == 1);
    more = more || docs[1].size() > 1 || docs[2].size() > 1;
  }
  CHECK(more);
}

TEST_CASE("the same seed gives the same files, another seed other files", "[pairs]") {
  const auto a = build(3, "a"), again = build(3, "b"), other = build(4, "c");
  bool all_same = true, any_different = false;
  for (const std::string split : {"train", "dev", "test"}) {
    const auto x = slurp(a.dir + "/" + split + ".jsonl");
    all_same = all_same && x == slurp(again.dir + "/" + split + ".jsonl");
    any_different = any_different || x != slurp(other.dir + "/" + split + ".jsonl");
  }
  CHECK(all_same);
  CHECK(any_different);
}

TEST_CASE("bad sources and interpreters are reported clearly", "[pairs]") {
  DocstringPairOptions o;
  o.source_dir = kSource + "/missing";
  o.out_dir = (fs::temp_directory_path() / ("comera_test_pairs_bad_" + std::to_string(::getpid()))).string();
  CHECK_THROWS_WITH(build_docstring_pairs(o), Contains("missing does not exist"));
  o.python = "/nonexistent/python3";
  CHECK_THROWS_WITH(build_docstring_pairs(o), Contains("cannot run '/nonexistent/python3'"));
  o.python = default_python();
  o.dev_fraction = 0.6;
  o.test_fraction = 0.5;
  CHECK_THROWS_WITH(build_docstring_pairs(o), Contains("leave room for train"));
}
