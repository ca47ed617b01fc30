// MNLI readers (TSV and JSONL fixtures in the published layouts), pair encoding and batching.
#include "core/data/mnli.h"
#include "core/data/pair_dataset.h"
#include "core/util/error.h"
#include "core/util/source_dir.h"
#include "tests/support/catch.h"

#include <ATen/ATen.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

using namespace comera;
using Catch::Matchers::Contains;
using Ids = std::vector<int64_t>;

namespace {

std::string fixture(const std::string& name) {
  return comera::source_dir() + "/tests/fixtures/mnli/" + name;
}

Ids to_ids(const at::Tensor& t) { return Ids(t.data_ptr<int64_t>(), t.data_ptr<int64_t>() + t.numel()); }

// The BERT docstring's toy vocabulary: ids by position.
WordPieceTokenizer toy() {
  return WordPieceTokenizer({"[PAD]", "[UNK]", "[CLS]", "[SEP]", "un", "##aff", "##able", "runn",
                             "##ing", "a", "b", "c"});
}

}  // namespace

TEST_CASE("GLUE's MNLI TSV: columns by name, '-' skipped and counted", "[mnli]") {
  PairReadStats stats;
  auto examples = read_mnli_tsv(fixture("dev_matched.tsv"), {}, &stats);
  REQUIRE(examples.size() == 4);
  CHECK(examples[0].sentence1 == "The new rights are nice enough");
  CHECK(examples[0].sentence2 == "Everyone really likes the newest benefits ");
  CHECK(examples[0].label == NliLabel::kNeutral);
  CHECK(examples[0].pair_id == "63735n");
  CHECK(examples[1].label == NliLabel::kContradiction);
  CHECK(examples[2].label == NliLabel::kEntailment);
  CHECK(examples[2].sentence2 ==
        "I like him for the most part, but would still enjoy seeing someone beat him.");
  CHECK(examples[3].pair_id == "78013c");
  CHECK(stats.lines == 5);
  CHECK(stats.examples == 4);
  CHECK(stats.no_gold_label == 1);
  CHECK(stats.malformed == 0);
  CHECK(stats.per_label == std::array<int64_t, 3>{1, 1, 2});
}

TEST_CASE("the train TSV layout (other columns, CRLF line ends) reads the same way", "[mnli]") {
  auto examples = read_mnli(fixture("train.tsv"));
  REQUIRE(examples.size() == 3);
  CHECK(examples[0].sentence1 ==
        "Conceptually cream skimming has two basic dimensions - product and geography.");
  CHECK(examples[0].label == NliLabel::kNeutral);
  CHECK(examples[1].label == NliLabel::kEntailment);
  CHECK(examples[2].sentence2 == "A member of my team will execute your orders with immense precision.");
  CHECK(examples[2].pair_id == "134793e");
}

TEST_CASE("MNLI JSONL gives the same examples as the TSV of the same rows", "[mnli]") {
  PairReadStats stats;
  auto jsonl = read_mnli(fixture("multinli_1.0_dev_matched.jsonl"), {}, &stats);
  auto tsv = read_mnli(fixture("dev_matched.tsv"));
  REQUIRE(jsonl.size() == 4);
  CHECK(stats.no_gold_label == 1);
  for (size_t i = 0; i < jsonl.size(); ++i) {
    CHECK(jsonl[i].sentence1 == tsv[i].sentence1);
    CHECK(jsonl[i].sentence2 == tsv[i].sentence2);
    CHECK(jsonl[i].label == tsv[i].label);
    CHECK(jsonl[i].pair_id == tsv[i].pair_id);
  }
}

TEST_CASE("malformed TSV lines name file, line and problem, or are skipped when asked", "[mnli]") {
  CHECK_THROWS_WITH(read_mnli_tsv(fixture("malformed.tsv")),
                    Contains("malformed.tsv:3: has 13 tab-separated fields, the header 12") &&
                        Contains("skip_malformed"));
  PairReadStats stats;
  auto examples = read_mnli_tsv(fixture("malformed.tsv"), {true}, &stats);
  REQUIRE(examples.size() == 2);
  CHECK(examples[1].pair_id == "134793e");
  CHECK(stats.malformed == 3);  // lines 3 (stray tab), 4 (label), 6 (cut short); 5 is blank
  CHECK(stats.lines == 5);
  CHECK_THAT(stats.first_malformed, Contains("malformed.tsv:3:"));

  PairReadOptions skip{true};
  read_mnli_tsv(fixture("malformed.tsv"), skip, &stats);
  CHECK(stats.malformed == 3);  // stats restart with every read
}

TEST_CASE("malformed JSONL lines are reported one by one", "[mnli]") {
  const std::string file = fixture("malformed.jsonl");
  CHECK_THROWS_WITH(read_mnli_jsonl(file), Contains("malformed.jsonl:2: is not valid JSON"));
  PairReadStats stats;
  auto examples = read_mnli_jsonl(file, {true}, &stats);
  REQUIRE(examples.size() == 2);
  CHECK(examples[0].label == NliLabel::kContradiction);
  CHECK(examples[1].sentence1 == "A");
  CHECK(examples[1].pair_id.empty());
  CHECK(stats.malformed == 4);
  // Each problem on its own, in a file whose line 2 is the bad one.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"gold_label": "neutral", "sentence1": "x"})", "has no string field 'sentence2'"},
      {R"({"gold_label": 2, "sentence1": "x", "sentence2": "y"})", "has no string field 'gold_label'"},
      {R"(["x", "y", "neutral"])", "is JSON but not an object"},
      {R"({"gold_label": "maybe", "sentence1": "x", "sentence2": "y"})",
       "gold_label 'maybe' is not entailment, neutral, contradiction or -"}};
  const std::string one = (std::filesystem::temp_directory_path() /
                           ("test_mnli_one_line_" + std::to_string(::getpid()) + ".jsonl"))
                              .string();
  for (const auto& [line, message] : cases) {
    { std::ofstream(one) << "\n" << line << "\n"; }
    CHECK_THROWS_WITH(read_mnli_jsonl(one), Contains(".jsonl:2: " + message));
  }
  std::filesystem::remove(one);
}

TEST_CASE("files without the needed columns or of unknown type are refused", "[mnli]") {
  CHECK_THROWS_WITH(read_mnli(fixture("test_matched.tsv")),
                    Contains("the header has no 'gold_label' column") && Contains("sentence2"));
  CHECK_THROWS_WITH(read_mnli(fixture("missing.tsv")), Contains("cannot open"));
  CHECK_THROWS_WITH(read_mnli("pairs.csv"), Contains("unknown pair file type"));
  CHECK(std::string(nli_label_name(NliLabel::kContradiction)) == "contradiction");
}

TEST_CASE("pair encoding is [CLS] a [SEP] b [SEP] and truncates the longer side first", "[mnli]") {
  const auto t = toy();
  auto p = encode_pair(t, "unaffable", "running", 2);
  CHECK(p.input_ids == Ids{2, 4, 5, 6, 3, 7, 8, 3});
  CHECK(p.segment_ids == Ids{0, 0, 0, 0, 0, 1, 1, 1});
  CHECK(p.label == 2);
  // Room for 3 of 5 tokens: drop from a (3 > 2), then from b at a tie (BERT pops b on ties).
  p = encode_pair(t, "unaffable", "running", 0, 6);
  CHECK(p.input_ids == Ids{2, 4, 5, 3, 7, 3});
  CHECK(p.segment_ids == Ids{0, 0, 0, 0, 1, 1});
  p = encode_pair(t, "a b c a b c a", "c", 0, 6);  // only the long side shrinks
  CHECK(p.input_ids == Ids{2, 9, 10, 3, 11, 3});
  CHECK_THROWS_WITH(encode_pair(t, "a", "b", 0, 2), Contains("max_length 2 leaves no room"));
}

TEST_CASE("real MNLI rows encode with bert-base-uncased ids", "[mnli]") {
  const auto t = WordPieceTokenizer::from_file();
  auto examples = read_mnli(fixture("dev_matched.tsv"));
  auto p = encode_pair(t, examples[0].sentence1, examples[0].sentence2,
                       static_cast<int64_t>(examples[0].label));
  Ids expected{101};
  for (const char* w : {"the", "new", "rights", "are", "nice", "enough"}) expected.push_back(t.id(w));
  expected.push_back(102);
  for (const char* w : {"everyone", "really", "likes", "the", "newest", "benefits"})
    expected.push_back(t.id(w));
  expected.push_back(102);
  CHECK(p.input_ids == expected);
  CHECK(p.label == 1);
  // The long telephone premise of row 3 is cut to fit 128 tokens in all.
  auto d = PairDataset::encode(examples, t, 32);
  CHECK(d.size() == 4);
  CHECK(d[2].input_ids.size() == 32);
  CHECK(d[2].input_ids.back() == 102);
  CHECK(d.label_counts() == Ids{1, 1, 2});
}

TEST_CASE("batches pad to the longest pair or a fixed length, with a mask", "[mnli]") {
  const auto t = toy();
  PairDataset d({encode_pair(t, "a", "b", 0), encode_pair(t, "a b c", "a b", 1),
                 encode_pair(t, "c", "c c", 2)},
                t.pad_id());
  CHECK(d.longest() == 8);
  auto b = d.batch({1, 0});
  CHECK(b.examples() == 2);
  CHECK(b.at("input_ids").sizes() == at::IntArrayRef({2, 8}));
  CHECK(b.at("input_ids").scalar_type() == at::kLong);
  CHECK(to_ids(b.at("input_ids")) == Ids{2, 9, 10, 11, 3, 9, 10, 3, /**/ 2, 9, 3, 10, 3, 0, 0, 0});
  CHECK(to_ids(b.at("segment_ids")) == Ids{0, 0, 0, 0, 0, 1, 1, 1, /**/ 0, 0, 0, 1, 1, 0, 0, 0});
  CHECK(to_ids(b.at("attention_mask")) == Ids{1, 1, 1, 1, 1, 1, 1, 1, /**/ 1, 1, 1, 1, 1, 0, 0, 0});
  CHECK(to_ids(b.at("labels")) == Ids{1, 0});
  auto fixed = d.batch({2}, 10);
  CHECK(to_ids(fixed.at("input_ids")) == Ids{2, 11, 3, 11, 11, 3, 0, 0, 0, 0});
  CHECK(to_ids(fixed.at("attention_mask")) == Ids{1, 1, 1, 1, 1, 1, 0, 0, 0, 0});
  CHECK_THROWS_WITH(d.batch({1}, 5), Contains("a pair of 8 tokens does not fit the fixed length 5"));
}

TEST_CASE("epochs: in order, or shuffled reproducibly by seed", "[mnli]") {
  const auto t = toy();
  std::vector<EncodedTokens> pairs;
  for (int i = 0; i < 10; ++i) pairs.push_back(encode_pair(t, "a", "b", i % 3));
  PairDataset d(pairs);
  auto plain = d.epoch(4);
  CHECK(plain == std::vector<Ids>{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9}});
  CHECK(d.epoch(4, std::nullopt, true).size() == 2);
  auto a = d.epoch(4, 7), b = d.epoch(4, 7), c = d.epoch(4, 8);
  CHECK(a == b);
  CHECK(a != c);
  Ids all;
  for (const auto& batch : a) all.insert(all.end(), batch.begin(), batch.end());
  std::sort(all.begin(), all.end());
  CHECK(all == Ids{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  CHECK_THROWS_WITH(d.epoch(0), Contains("batch size 0"));
}
