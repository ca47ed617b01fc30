// data.format "text": single texts, one JSON object per line (text_dataset.h), the default
// WordNet task's form.
#include "core/data/data_dirs.h"
#include "core/data/data_format.h"
#include "core/data/format_support.h"
#include "core/data/text_dataset.h"
#include "core/util/home_dir.h"

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
    return load_token_task(config, dir(config), 1,
                           [&](const std::string& file, const std::string& key, int64_t limit,
                               const WordPieceTokenizer& tokenizer, std::vector<std::string>&) {
                             require_file(file, key, fix(config));
                             auto examples = read_text_jsonl(file);
                             limit_to(examples, limit);
                             return std::make_shared<TextDataset>(
                                 TextDataset::encode(examples, tokenizer, config.max_length));
                           });
  }
  void require_files(const DataConfig& config) const override { require_token_files(config, dir(config), fix(config)); }
  std::string folder(const DataConfig& config) const override { return dir(config); }

 private:
  static std::string dir(const DataConfig& config) { return config.dir.empty() ? default_wordnet_dir() : home_path(config.dir); }
  static std::string fix(const DataConfig& config) {
    return split_fix(config, "run `comera data build-wordnet` to build the default task");
  }
};

}  // namespace

std::shared_ptr<const DataFormat> text_format() { return std::make_shared<TextFormat>(); }

}  // namespace comera
