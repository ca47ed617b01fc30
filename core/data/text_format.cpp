// data.format "text": single texts, one JSON object per line (text_dataset.h), the default
// WordNet task's form.
#include "core/data/data_dirs.h"
#include "core/data/data_format.h"
#include "core/data/format_support.h"
#include "core/data/text_dataset.h"

#include <nlohmann/json.hpp>

namespace comera {

namespace {

class TextFormat : public DataFormat {
 public:
  std::string name() const override { return "text"; }
  std::string default_train() const override { return "train.jsonl"; }
  std::string default_eval() const override { return "dev.jsonl"; }
  nlohmann::json read(const ConfigReader&, const DataConfig&) const override { return nlohmann::json::object(); }
  TaskData load(const DataConfig& config) const override {
    const auto fix = config.dir.empty() ? "run `comera data build-wordnet` to build the default task"
                                        : "check data.dir / --data and the data.train / data.eval names";
    return load_token_task(config, config.dir.empty() ? default_wordnet_dir() : config.dir, 1,
                           [&](const std::string& file, const std::string& key, int64_t limit,
                               const WordPieceTokenizer& tokenizer) {
                             require_file(file, key, fix);
                             auto examples = read_text_jsonl(file);
                             limit_to(examples, limit);
                             return std::make_shared<TextDataset>(
                                 TextDataset::encode(examples, tokenizer, config.max_length));
                           });
  }
};

}  // namespace

std::shared_ptr<const DataFormat> text_format() { return std::make_shared<TextFormat>(); }

}  // namespace comera
