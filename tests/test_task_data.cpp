// The data section of an experiment: both splits loaded and encoded, the gold-label filter
// used by masked-LM pre-training, and the masking ids taken from the vocabulary.
#include "core/data/pair_dataset.h"
#include "core/data/task_data.h"
#include "core/util/config_reader.h"
#include "core/util/error.h"
#include "tests/support/catch.h"
#include "tests/support/temp_dir.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

using namespace comera;
using Catch::Matchers::Contains;

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
  bad["labels"] = nlohmann::json::array();
  CHECK_THROWS_WITH(config(bad), Contains("non-empty list"));
}
