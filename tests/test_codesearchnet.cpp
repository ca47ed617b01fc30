// CodeSearchNet's release layout read from gzip fixtures written by Python's gzip module: both
// field-name sets, shard order, malformed and damaged input named by file and line, and the
// bimodal/unimodal examples encoded for masked-LM through data.format codesearchnet.
#include "core/data/code_dataset.h"
#include "core/data/codesearchnet.h"
#include "core/data/task_data.h"
#include "core/util/config_reader.h"
#include "core/util/error.h"
#include "core/util/source_dir.h"
#include "tests/support/catch.h"
#include "tests/support/temp_dir.h"

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

using namespace comera;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

const std::string kRoot = comera::source_dir() + "/tests/fixtures/codesearchnet";
const std::string kCorrupt = comera::source_dir() + "/tests/fixtures/codesearchnet_corrupt";

std::vector<std::string> names(const std::vector<CodeFunction>& functions) {
  std::vector<std::string> out;
  for (const auto& f : functions) out.push_back(f.func_name);
  return out;
}

}  // namespace

TEST_CASE("CodeSearchNet records are read from .jsonl.gz in the release's field names",
          "[codesearchnet]") {
  const auto train = read_codesearchnet(kRoot, "train", {"python"});
  // Shards 0 then 1, lines in order.
  REQUIRE(names(train) == std::vector<std::string>{"circle_area", "square", "count_words"});
  const auto& f = train[0];
  CHECK(f.repo == "acme/geo");
  CHECK(f.path == "geo/area.py");
  CHECK(f.language == "python");
  CHECK(f.code == "def circle_area(r):\n    \"\"\"Area of a circle.\"\"\"\n    return 3.14159 * r * r");
  CHECK(f.original_string == f.code);
  CHECK(f.docstring == "Area of a circle.");
  CHECK(f.docstring_tokens == std::vector<std::string>{"Area", "of", "a", "circle", "."});
  CHECK(f.code_tokens.size() == 12);
  CHECK(f.sha == "0123abcd");
  CHECK(f.url == "https://example.org/acme/geo/geo/area.py");
  CHECK(f.partition == "train");
  CHECK(train[1].docstring.empty());
  CHECK(names(read_codesearchnet(kRoot, "valid", {"python"})) == std::vector<std::string>{"half"});
  CHECK(names(read_codesearchnet(kRoot, "train", {"python"}, 2)) == std::vector<std::string>{"circle_area", "square"});
  // The limit is per language, so a sample has every language.
  CHECK(names(read_codesearchnet(kRoot, "train", {}, 1)) == std::vector<std::string>{"Max", "circle_area"});
}

TEST_CASE("CodeSearchNet records are read in the mirror's field names", "[codesearchnet]") {
  const auto go = read_codesearchnet(kRoot, "train", {"go"});
  REQUIRE(names(go) == std::vector<std::string>{"Max", "Abs"});
  CHECK(go[0].repo == "acme/mathx");
  CHECK(go[0].path == "mathx/max.go");
  CHECK(go[0].language == "go");
  CHECK(go[0].code.rfind("func Max(a, b int) int {", 0) == 0);
  CHECK(go[0].original_string == go[0].code);
  CHECK(go[0].docstring == "Max returns the larger of a and b.");
  CHECK(go[0].docstring_tokens.size() == 9);
  CHECK(go[0].code_tokens.front() == "func");
  CHECK(go[0].partition == "train");
  CHECK(go[0].url == "https://example.org/acme/mathx");
  CHECK(go[0].sha.empty());
  // Every language folder, alphabetically, when none is named.
  CHECK(names(read_codesearchnet(kRoot, "valid", {})) == std::vector<std::string>{"Min", "half"});
}

TEST_CASE("malformed CodeSearchNet input is named by file and line", "[codesearchnet]") {
  const auto train = kCorrupt + "/ruby/final/jsonl/train/ruby_train_0.jsonl.gz";
  // Line 2 is blank (skipped), line 3 is cut-off JSON.
  CHECK_THROWS_WITH(read_codesearchnet_file(train),
                    Contains("ruby_train_0.jsonl.gz:3: not valid JSON") && Contains("\"code\""));
  CHECK(read_codesearchnet_file(train, 1).size() == 1);
  CHECK_THROWS_WITH(read_codesearchnet(kCorrupt, "valid", {"ruby"}),
                    Contains("ruby_valid_0.jsonl.gz:2: \"code\" or \"func_code_string\" is not a string"));
  CHECK_THROWS_WITH(parse_code_function(nlohmann::json{{"code", "x"}}), Contains("no \"language\""));

  // A gzip file cut short is damaged, not silently short.
  comera::testing::TempDir temp;
  const auto cut = temp.file("python_train_0.jsonl.gz");
  {
    std::ifstream in(kRoot + "/python/final/jsonl/train/python_train_0.jsonl.gz", std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() - 12);
  }
  CHECK_THROWS_WITH(read_codesearchnet_file(cut), Contains("python_train_0.jsonl.gz") && Contains("damaged"));

  CHECK_THROWS_WITH(read_codesearchnet(kRoot, "test", {"python"}),
                    Contains("no python_test_{k}.jsonl.gz file") && Contains("data.languages"));
  CHECK_THROWS_WITH(codesearchnet_files(temp.file("none"), "train", {}), Contains("is not a folder"));
  CHECK_THROWS_WITH(read_codesearchnet_file(temp.file("missing.jsonl.gz")), Contains("cannot open"));

  // Bad UTF-8 is named as such, with the parser's reason.
  std::ofstream(temp.file("utf8.jsonl")) << "{\"code\": \"caf\xe9\", \"language\": \"go\"}\n";
  CHECK_THROWS_WITH(read_codesearchnet_file(temp.file("utf8.jsonl")), Contains("utf8.jsonl:1: not valid JSON (") &&
                                                                             Contains("UTF-8"));
  // A part kept both compressed and plain (after `gunzip -k`) is refused, not read twice.
  const auto part = temp.file("corpus/python/final/jsonl/train");
  fs::create_directories(part);
  fs::copy_file(kRoot + "/python/final/jsonl/train/python_train_0.jsonl.gz", part + "/python_train_0.jsonl.gz");
  fs::copy_file(kRoot + "/python/final/jsonl/train/python_train_0.jsonl.gz", part + "/python_train_0.jsonl");
  CHECK_THROWS_WITH(read_codesearchnet(temp.file("corpus"), "train", {"python"}),
                    Contains("python_train_0.jsonl and ") && Contains("hold the same part"));
}

TEST_CASE("functions become bimodal and unimodal masked-LM examples", "[codesearchnet]") {
  comera::testing::TempDir temp;
  const fs::path dir = temp.file("");
  std::ofstream(dir / "vocab.txt") << "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\ndef\nsquare\narea\nof\na\ncircle\n"
                                      "(\n)\n:\nreturn\n*\n.\nr\ns\n";
  const auto vocab = (dir / "vocab.txt").string();
  const auto config = [&](const std::string& examples) {
    return read_data_config(ConfigReader({{"format", "codesearchnet"}, {"dir", kRoot}, {"vocab", vocab},
                                          {"languages", {"python"}}, {"examples", examples}, {"max_length", 64}},
                                         "data"));
  };
  const auto at_ids = [](const at::Tensor& t) {
    return std::vector<int64_t>(t.data_ptr<int64_t>(), t.data_ptr<int64_t>() + t.numel());
  };
  // [PAD]=0 [UNK]=1 [CLS]=2 [SEP]=3; def=5 square=6 area=7 of=8 a=9 circle=10 (=11 )=12 :=13
  // return=14 *=15 .=16 r=17 s=18. The code is read from its tokens ("def circle_area ( r ) :
  // return 3.14159 * r * r"), split at punctuation: "_", "3" and "14159" are [UNK].
  const std::vector<int64_t> doc{7, 8, 9, 10, 16};
  const std::vector<int64_t> code{5, 10, 1, 7, 11, 17, 12, 13, 14, 1, 16, 1, 15, 17, 15, 17};

  // Bimodal: only documented functions, [CLS] doc [SEP] code [SEP], segments 0 then 1.
  auto data = load_task_data(config("bimodal"));
  CHECK(data.info.segments == 2);
  REQUIRE(data.train->size() == 2);  // circle_area, count_words (square has no docstring)
  auto b = data.train->batch({0});
  std::vector<int64_t> expected{2};
  expected.insert(expected.end(), doc.begin(), doc.end());
  expected.push_back(3);
  const size_t first = expected.size();
  expected.insert(expected.end(), code.begin(), code.end());
  expected.push_back(3);
  CHECK(at_ids(b.at("input_ids")) == expected);
  auto segments = std::vector<int64_t>(first, 0);
  segments.resize(expected.size(), 1);
  CHECK(at_ids(b.at("segment_ids")) == segments);
  CHECK(data.eval->size() == 1);

  // Unimodal: every function, code only.
  data = load_task_data(config("unimodal"));
  CHECK(data.info.segments == 1);
  REQUIRE(data.train->size() == 3);
  expected = {2};
  expected.insert(expected.end(), code.begin(), code.end());
  expected.push_back(3);
  CHECK(at_ids(data.train->batch({0}).at("input_ids")) == expected);
  CHECK(at_ids(data.train->batch({1}).at("input_ids")) == std::vector<int64_t>{2, 5, 6, 11, 18, 12, 13, 14, 18, 15, 18, 3});

  // Both: bimodal where documented, unimodal otherwise.
  data = load_task_data(config("both"));
  REQUIRE(data.train->size() == 3);
  CHECK(at_ids(data.train->batch({1}).at("segment_ids")) == std::vector<int64_t>(12, 0));
  CHECK(at_ids(data.train->batch({0}).at("segment_ids")) == segments);

  CHECK_THROWS_WITH(read_data_config(ConfigReader({{"format", "codesearchnet"}, {"train", "train.jsonl"}}, "data")),
                    Contains("data.train") && Contains("not a CodeSearchNet split"));
  CHECK_THROWS_WITH(read_data_config(ConfigReader({{"format", "codesearchnet"}, {"examples", "all"}}, "data")),
                    Contains("data.examples"));
  CHECK_THROWS_WITH(read_data_config(ConfigReader({{"format", "pairs"}, {"examples", "both"}}, "data")),
                    Contains("data.examples"));
  CHECK_THROWS_WITH(load_task_data(read_data_config(ConfigReader(
                        {{"format", "codesearchnet"}, {"dir", kRoot}, {"vocab", vocab}, {"languages", {"ruby"}}}, "data"))),
                    Contains("no ruby_train_{k}.jsonl.gz file"));
}
