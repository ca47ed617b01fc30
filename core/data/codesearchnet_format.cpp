// data.format "codesearchnet": CodeSearchNet's layout of function records (codesearchnet.h),
// data.train and data.eval naming splits; data.languages picks language folders and
// data.examples what each function gives (code_dataset.h: bimodal, unimodal, both).
#include "core/data/code_dataset.h"
#include "core/data/codesearchnet.h"
#include "core/data/data_dirs.h"
#include "core/data/data_format.h"
#include "core/data/format_support.h"
#include "core/data/wordpiece_tokenizer.h"
#include "core/util/config_reader.h"
#include "core/util/error.h"
#include "core/util/home_dir.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>

namespace comera {

namespace {

class CodeSearchNetFormat : public DataFormat {
 public:
  std::string name() const override { return "codesearchnet"; }
  std::string default_train() const override { return "train"; }
  std::string default_eval() const override { return "valid"; }
  std::vector<std::string> keys() const override { return {"languages", "examples"}; }

  // languages: the folders read (empty = every language folder).
  nlohmann::json read(const ConfigReader& r, const DataConfig& config) const override {
    for (const auto* split : {&config.train, &config.eval}) {
      const auto& splits = codesearchnet_splits();
      if (std::find(splits.begin(), splits.end(), *split) == splits.end())
        throw Error(r.key_path(split == &config.train ? "train" : "eval") + ": '" + *split +
                    "' is not a CodeSearchNet split (train, valid, test)");
    }
    auto languages = nlohmann::json::array();
    if (r.has("languages")) {
      const auto& list = r.value("languages");
      // [] (as recorded): every language folder.
      if (!list.is_array())
        throw Error(r.key_path("languages") + ": expected a list such as [\"python\", \"go\"] ([] for all)");
      for (const auto& l : list) {
        if (!l.is_string() || l.get<std::string>().empty())
          throw Error(r.key_path("languages") + ": expected language names, got " + l.dump());
        languages.push_back(l);
      }
    }
    return {{"languages", languages}, {"examples", r.choice("examples", "bimodal", code_example_names())}};
  }

  TaskData load(const DataConfig& config) const override {
    const auto languages = config.settings.at("languages").get<std::vector<std::string>>();
    const auto examples = config.settings.at("examples").get<std::string>();
    require_corpus(config);
    return load_token_task(
        config, corpus_dir(config), examples == "unimodal" ? 1 : 2,
        [&](const std::string& file, const std::string&, int64_t limit, const WordPieceTokenizer& tokenizer,
            std::vector<std::string>&) {
          const auto dir = std::filesystem::path(file).parent_path().string();
          const auto split = std::filesystem::path(file).filename().string();
          return std::make_shared<CodeDataset>(CodeDataset::encode(read_codesearchnet(dir, split, languages, limit),
                                                                   parse_code_examples(examples), tokenizer,
                                                                   config.max_length));
        });
  }
  std::string folder(const DataConfig& config) const override { return corpus_dir(config); }
  void require_files(const DataConfig& config) const override {
    require_corpus(config);
    require_vocab_file(config.vocab.empty() ? default_vocab_path() : config.vocab);
  }

 private:
  static std::string corpus_dir(const DataConfig& config) {
    return config.dir.empty() ? default_code_corpus_dir() : home_path(config.dir);
  }
  static void require_corpus(const DataConfig& config) {
    const auto dir = corpus_dir(config);
    if (!std::filesystem::exists(dir))
      throw Error(dir + " not found (" +
                  (config.dir.empty() ? "run `comera data code-corpus` to build the code corpus"
                                      : "check data.dir / --data") + ")");
  }
};

}  // namespace

std::shared_ptr<const DataFormat> codesearchnet_format() { return std::make_shared<CodeSearchNetFormat>(); }

}  // namespace comera
