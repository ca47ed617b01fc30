#include "core/data/task_data.h"

#include "core/data/docstring_pairs.h"
#include "core/data/mnli.h"
#include "core/data/pair_dataset.h"
#include "core/data/wordpiece_tokenizer.h"
#include "core/util/config_reader.h"
#include "core/util/error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>

namespace comera {

nlohmann::json DataConfig::to_json() const {
  return {{"dir", dir}, {"train", train}, {"eval", eval}, {"vocab", vocab},
          {"max_length", max_length}, {"train_limit", train_limit}, {"eval_limit", eval_limit}, {"labels", labels}};
}

DataConfig read_data_config(const ConfigReader& r) {
  DataConfig c;
  c.dir = r.string("dir", c.dir);
  c.train = r.string("train", c.train);
  c.eval = r.string("eval", c.eval);
  c.vocab = r.string("vocab", c.vocab);
  c.max_length = r.integer("max_length", c.max_length, 4);
  c.train_limit = r.integer("train_limit", 0, 0);
  c.eval_limit = r.integer("eval_limit", 0, 0);
  if (r.has("labels")) {
    const auto& labels = r.value("labels");
    if (!labels.is_array() || labels.empty())
      throw Error(r.key_path("labels") + ": expected a non-empty list of gold labels "
                  "(entailment, neutral, contradiction)");
    for (const auto& label : labels) {
      if (!label.is_string())
        throw Error(r.key_path("labels") + ": expected label names, got " + label.dump());
      const auto name = label.get<std::string>();
      bool known = false;
      for (int64_t k = 0; k < kNliClasses; ++k)
        known = known || name == nli_label_name(static_cast<NliLabel>(k));
      if (!known)
        throw Error(r.key_path("labels") + ": '" + name +
                    "' is not a gold label (entailment, neutral, contradiction)");
      c.labels.push_back(name);
    }
  }
  r.finish();
  return c;
}

namespace {

std::vector<PairExample> read_split(const std::string& file, int64_t limit, bool default_task,
                                    const std::vector<std::string>& labels) {
  if (!std::filesystem::exists(file))
    throw Error(file + " not found (" +
                (default_task ? std::string("run `comera data build-pairs` to build the default task")
                              : std::string("check data.dir / --data and the data.train / data.eval names")) +
                ")");
  auto examples = read_mnli(file);
  if (!labels.empty()) {
    examples.erase(std::remove_if(examples.begin(), examples.end(),
                                  [&](const PairExample& e) {
                                    return std::find(labels.begin(), labels.end(),
                                                     nli_label_name(e.label)) == labels.end();
                                  }),
                   examples.end());
  }
  if (limit > 0 && static_cast<int64_t>(examples.size()) > limit) examples.resize(static_cast<size_t>(limit));
  return examples;
}

}  // namespace

TaskData load_task_data(const DataConfig& config) {
  const bool default_task = config.dir.empty();
  const std::filesystem::path dir = default_task ? default_pairs_dir() : config.dir;
  const auto tokenizer =
      WordPieceTokenizer::from_file(config.vocab.empty() ? default_vocab_path() : config.vocab);
  const auto train_file = (dir / config.train).string(), eval_file = (dir / config.eval).string();
  TaskData data;
  data.train = std::make_shared<PairDataset>(PairDataset::encode(
      read_split(train_file, config.train_limit, default_task, config.labels), tokenizer, config.max_length));
  data.eval = std::make_shared<PairDataset>(PairDataset::encode(
      read_split(eval_file, config.eval_limit, default_task, config.labels), tokenizer, config.max_length));
  data.info.vocab_size = tokenizer.size();
  data.info.mask_id = tokenizer.id("[MASK]");
  data.info.special_ids = {tokenizer.pad_id(), tokenizer.cls_id(), tokenizer.sep_id()};
  data.info.max_length = config.max_length;
  data.info.classes = kNliClasses;
  data.info.segments = 2;
  data.train_file = train_file;
  data.eval_file = eval_file;
  return data;
}

}  // namespace comera
