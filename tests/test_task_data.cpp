// The data section of an experiment: both splits loaded and encoded (sentence pairs or single
// texts), the gold-label filter used by masked-LM pre-training, the masking ids taken from the
// vocabulary, and the classes the labels need.
#include "core/data/pair_dataset.h"
#include "core/data/task_data.h"
#include "core/data/text_dataset.h"
#include "core/models/model_kind.h"
#include "core/util/config_reader.h"
#include "core/util/error.h"
#include "core/util/gzip_lines.h"
#include "core/util/source_dir.h"
#include "tests/support/catch.h"
#include "tests/support/temp_dir.h"

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

using namespace comera;
using Catch::Matchers::Contains;
using Ids = std::vector<int64_t>;

namespace {

// vocab.txt, train.jsonl and dev.jsonl (the same five pairs) in `dir`.
void write_fixture(const std::filesystem::path& dir) {
  std::ofstream(dir / "vocab.txt") << "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nthe\ncode\nreads\na\nfile\n";
  std::ofstream rows(dir / "train.jsonl");
  const char* labels[] = {"entailment", "neutral", "contradiction", "entailment", "neutral"};
  for (const char* label : labels)
    rows << nlohmann::json{{"sentence1", "the code"}, {"sentence2", "reads a file"},
                           {"gold_label", label}}.dump()
         << "\n";
  rows.close();
  std::filesystem::copy_file(dir / "train.jsonl", dir / "dev.jsonl");
}

// train.jsonl and dev.jsonl of single texts with labels 0..4 in `dir`.
void write_texts(const std::filesystem::path& dir) {
  std::ofstream rows(dir / "train.jsonl");
  const char* texts[] = {"the code", "reads a file", "a file", "the file reads the code", "code"};
  for (int64_t label = 0; label < 5; ++label)
    rows << nlohmann::json{{"text", texts[label]}, {"label", label}, {"note", "ignored"}}.dump() << "\n";
  rows << "\n";  // blank lines are skipped
  rows.close();
  std::ofstream(dir / "dev.jsonl") << nlohmann::json{{"text", "the file"}, {"label", 1}}.dump() << "\n";
}

Ids to_ids(const at::Tensor& t) { return Ids(t.data_ptr<int64_t>(), t.data_ptr<int64_t>() + t.numel()); }

DataConfig config(const nlohmann::json& j) { return read_data_config(ConfigReader(j, "data")); }

}  // namespace

TEST_CASE("task data keeps only the configured gold labels", "[task_data]") {
  comera::testing::TempDir temp;
  const std::filesystem::path dir = temp.file("");
  write_fixture(dir);
  const nlohmann::json base = {{"dir", dir.string()}, {"vocab", (dir / "vocab.txt").string()},
                               {"max_length", 16}};
  const auto all = load_task_data(config(base));
  CHECK(all.train->size() == 5);
  CHECK(all.eval->size() == 5);

  auto only = base;
  only["labels"] = {"entailment"};
  const auto kept = load_task_data(config(only));
  REQUIRE(kept.train->size() == 2);
  CHECK(kept.eval->size() == 2);
  const auto& train = dynamic_cast<const PairDataset&>(*kept.train);
  CHECK(train[0].label == 0);
  CHECK(train[1].label == 0);
  // [CLS] the code [SEP] reads a file [SEP]
  CHECK(train[0].input_ids == std::vector<int64_t>{2, 5, 6, 3, 7, 8, 9, 3});

  CHECK(kept.info.mask_id == 4);
  CHECK(kept.info.vocab_size == 10);
  CHECK(kept.info.special_ids == std::vector<int64_t>{0, 2, 3});
  CHECK(kept.info.max_length == 16);

  auto bad = base;
  bad["labels"] = {"entails"};
  CHECK_THROWS_WITH(config(bad), Contains("data.labels") && Contains("'entails' is not a gold label"));
  bad["labels"] = "entailment";
  CHECK_THROWS_WITH(config(bad), Contains("expected a list of gold labels"));
  auto every = base;
  every["labels"] = nlohmann::json::array();  // as recorded: every label
  CHECK(load_task_data(config(every)).train->size() == 5);
}

TEST_CASE("MNLI files as a task: rows without a gold label and skipped lines are told, .gz files read", "[task_data]") {
  comera::testing::TempDir temp;
  const std::filesystem::path dir = temp.file("");
  const std::filesystem::path fixtures = comera::source_dir() + "/tests/fixtures/mnli";
  for (const char* f : {"train.tsv", "dev_matched.tsv", "malformed.tsv"}) std::filesystem::copy_file(fixtures / f, dir / f);
  nlohmann::json j = {{"dir", dir.string()}, {"train", "train.tsv"}, {"eval", "dev_matched.tsv"}, {"max_length", 32}};
  const auto data = load_task_data(config(j));
  // dev_matched.tsv: 5 rows, one with gold_label '-'.
  CHECK(data.eval->size() == 4);
  REQUIRE(data.notes.size() == 1);
  CHECK_THAT(data.notes[0], Contains("dev_matched.tsv: 1 rows without a gold label"));
  CHECK_THAT(describe_data(data), Contains("4 evaluation pairs") && Contains("\ndata: ") && Contains("left out"));

  std::ifstream plain(dir / "dev_matched.tsv", std::ios::binary);
  write_gzip((dir / "dev.tsv.gz").string(), std::string(std::istreambuf_iterator<char>(plain), {}));
  j["eval"] = "dev.tsv.gz";
  CHECK(load_task_data(config(j)).eval->size() == 4);

  j["eval"] = "malformed.tsv";
  CHECK_THROWS_WITH(load_task_data(config(j)), Contains("malformed.tsv:") && Contains("data.skip_malformed"));
  j["skip_malformed"] = true;
  const auto skipping = load_task_data(config(j));
  CHECK(skipping.eval->size() > 0);
  CHECK_THAT(skipping.notes.back(), Contains("malformed lines skipped (the first: ") && Contains("malformed.tsv:"));
  // Unset, the key is absent from the config, so configs recorded before it existed still match.
  j.erase("skip_malformed");
  CHECK_FALSE(config(j).to_json().dump().find("skip_malformed") != std::string::npos);
}

TEST_CASE("single texts: [CLS] text [SEP], segments 0, the classes the labels need", "[task_data]") {
  comera::testing::TempDir temp;
  const std::filesystem::path dir = temp.file("");
  write_fixture(dir);
  write_texts(dir);
  const nlohmann::json base = {{"format", "text"}, {"dir", dir.string()},
                               {"vocab", (dir / "vocab.txt").string()}, {"max_length", 5}};
  const auto data = load_task_data(config(base));
  REQUIRE(data.train->size() == 5);
  CHECK(data.train->unit() == "texts");
  CHECK(data.eval->size() == 1);
  CHECK(data.info.classes == 5);
  const auto& train = dynamic_cast<const TextDataset&>(*data.train);
  CHECK(train[1].input_ids == Ids{2, 7, 8, 9, 3});       // [CLS] reads a file [SEP]
  CHECK(train[3].input_ids == Ids{2, 5, 9, 7, 3});       // cut to max_length 5
  CHECK(train[3].segment_ids == Ids{0, 0, 0, 0, 0});
  const auto b = train.batch({4, 1});
  CHECK(to_ids(b.at("input_ids")) == Ids{2, 6, 3, 0, 0, /**/ 2, 7, 8, 9, 3});
  CHECK(to_ids(b.at("segment_ids")) == Ids(10, 0));
  CHECK(to_ids(b.at("attention_mask")) == Ids{1, 1, 1, 0, 0, /**/ 1, 1, 1, 1, 1});
  CHECK(to_ids(b.at("labels")) == Ids{4, 1});
  CHECK_THROWS_WITH(train.batch({3}, 4), Contains("a text of 5 tokens does not fit the fixed length 4"));

  // The model's classes must cover the labels, before any training.
  const nlohmann::json model = {{"vocab", 16}, {"d_model", 8}, {"heads", 2}, {"layers", 1},
                                {"ffn", 16}, {"max_positions", 8}, {"classes", 3}};
  CHECK_THROWS_WITH(parse_model_spec(model).build({}, data.info),
                    Contains("model.classes: 3 but the data has 5 classes (labels up to 4)") &&
                        Contains("set model.classes to at least 5"));
  auto five = model;
  five["classes"] = 5;
  CHECK(parse_model_spec(five).build({}, data.info) != nullptr);

  auto bad = base;
  bad["labels"] = {"entailment"};
  CHECK_THROWS_WITH(config(bad), Contains("data.labels") && Contains("data.format text has none"));
  bad = base;
  bad["format"] = "csv";
  CHECK_THROWS_WITH(config(bad), Contains("data.format"));
  bad = base;
  bad["train"] = "missing.jsonl";
  CHECK_THROWS_WITH(load_task_data(config(bad)), Contains("missing.jsonl not found") && Contains("data.dir"));
  std::filesystem::create_directories(dir / "folder.jsonl");
  bad["train"] = "folder.jsonl";
  CHECK_THROWS_WITH(load_task_data(config(bad)), Contains("folder.jsonl is a folder, not a file: data.train"));
}

TEST_CASE("single-text files: a malformed line is an error naming file and line", "[task_data]") {
  comera::testing::TempDir temp;
  const std::string file = temp.file("texts.jsonl");
  const std::pair<std::string, std::string> cases[] = {
      {"not json", "not valid JSON (["},
      {"[1, 2]", "not a JSON object"},
      {R"({"label": 1})", "no \"text\" string"},
      {R"({"text": 3, "label": 1})", "no \"text\" string"},
      {R"({"text": "a"})", "no \"label\" integer >= 0"},
      {R"({"text": "a", "label": -1})", "no \"label\" integer >= 0"},
      {R"({"text": "a", "label": "noun.animal"})", "no \"label\" integer >= 0"},
  };
  for (const auto& [line, problem] : cases) {
    std::ofstream(file) << R"({"text": "fine", "label": 0})" << "\n\n" << line << "\n";
    CHECK_THROWS_WITH(read_text_jsonl(file), Contains(file + ":3: " + problem));
  }
  std::ofstream(file) << "{\"text\": \"caf\xe9\", \"label\": 1}\n";
  CHECK_THROWS_WITH(read_text_jsonl(file), Contains(file + ":1: not valid JSON (") && Contains("UTF-8"));
  CHECK_THROWS_WITH(read_text_jsonl(temp.file("none.jsonl")), Contains("cannot open"));
  comera::write_gzip(temp.file("texts.jsonl.gz"), "{\"text\": \"packed\", \"label\": 4}\n");
  const auto packed = read_text_jsonl(temp.file("texts.jsonl.gz"));
  REQUIRE(packed.size() == 1);
  CHECK(packed[0].text == "packed");
  CHECK(packed[0].label == 4);
}
