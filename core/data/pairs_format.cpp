// data.format "pairs": sentence pairs in MNLI's TSV or JSONL forms (mnli.h): MNLI itself, the
// code/docstring task, the WordNet pairs; data.labels keeps only some gold labels.
#include "core/data/data_dirs.h"
#include "core/data/data_format.h"
#include "core/data/format_support.h"
#include "core/data/mnli.h"
#include "core/data/pair_dataset.h"
#include "core/util/config_reader.h"
#include "core/util/error.h"
#include "core/util/home_dir.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace comera {

namespace {

bool is_gold_label(const std::string& name) {
  for (int64_t k = 0; k < kNliClasses; ++k)
    if (name == nli_label_name(static_cast<NliLabel>(k))) return true;
  return false;
}

class PairsFormat : public DataFormat {
 public:
  std::string name() const override { return "pairs"; }
  std::string default_train() const override { return "train.jsonl"; }
  // MNLI: dev_matched.tsv or multinli_1.0_dev_matched.jsonl
  std::string default_eval() const override { return "dev.jsonl"; }
  std::vector<std::string> keys() const override { return {"labels", "skip_malformed"}; }

  // labels: keep these gold labels (e.g. ["entailment"]: a docstring with its own code, for
  // masked-LM pre-training); empty = all. skip_malformed: count and skip malformed lines
  // instead of failing on the first.
  nlohmann::json read(const ConfigReader& r, const DataConfig&) const override {
    auto labels = nlohmann::json::array();
    if (r.has("labels")) {
      const auto& list = r.value("labels");
      // [] (as recorded): every gold label.
      if (!list.is_array())
        throw Error(r.key_path("labels") + ": expected a list of gold labels "
                    "(entailment, neutral, contradiction; [] for all)");
      for (const auto& label : list) {
        if (!label.is_string())
          throw Error(r.key_path("labels") + ": expected label names, got " + label.dump());
        if (!is_gold_label(label.get<std::string>()))
          throw Error(r.key_path("labels") + ": '" + label.get<std::string>() +
                      "' is not a gold label (entailment, neutral, contradiction)");
        labels.push_back(label);
      }
    }
    nlohmann::json settings = {{"labels", labels}};
    // Only when set, so configs (and their hashes) recorded before the key existed still match.
    if (r.boolean("skip_malformed", false)) settings["skip_malformed"] = true;
    return settings;
  }

  TaskData load(const DataConfig& config) const override {
    const auto labels = config.settings.at("labels").get<std::vector<std::string>>();
    PairReadOptions read;
    read.skip_malformed = config.settings.value("skip_malformed", false);
    return load_token_task(
        config, dir(config), 2,
        [&](const std::string& file, const std::string& key, int64_t limit, const WordPieceTokenizer& tokenizer,
            std::vector<std::string>& notes) {
          require_file(file, key, fix(config));
          PairReadStats stats;
          auto examples = read_mnli(file, read, &stats);
          if (stats.no_gold_label > 0)
            notes.push_back(file + ": " + std::to_string(stats.no_gold_label) +
                            " rows without a gold label ('-': no annotator majority) left out");
          if (stats.malformed > 0)
            notes.push_back(std::to_string(stats.malformed) + " malformed lines skipped (the first: " +
                            stats.first_malformed + ")");
          if (!labels.empty())
            examples.erase(std::remove_if(examples.begin(), examples.end(),
                                          [&](const PairExample& e) {
                                            return std::find(labels.begin(), labels.end(),
                                                             nli_label_name(e.label)) == labels.end();
                                          }),
                           examples.end());
          limit_to(examples, limit);
          return std::make_shared<PairDataset>(PairDataset::encode(examples, tokenizer, config.max_length));
        });
  }
  void require_files(const DataConfig& config) const override { require_token_files(config, dir(config), fix(config)); }
  std::string folder(const DataConfig& config) const override { return dir(config); }

 private:
  static std::string dir(const DataConfig& config) { return config.dir.empty() ? default_pairs_dir() : home_path(config.dir); }
  static std::string fix(const DataConfig& config) {
    return split_fix(config, "run `comera data build-pairs` to build the code/docstring task");
  }
};

}  // namespace

std::shared_ptr<const DataFormat> pairs_format() { return std::make_shared<PairsFormat>(); }

}  // namespace comera
