#include "core/data/task_data.h"

#include "core/data/code_corpus.h"
#include "core/data/code_dataset.h"
#include "core/data/codesearchnet.h"
#include "core/data/docstring_pairs.h"
#include "core/data/mnli.h"
#include "core/data/pair_dataset.h"
#include "core/data/text_dataset.h"
#include "core/data/wordnet.h"
#include "core/data/wordpiece_tokenizer.h"
#include "core/util/config_reader.h"
#include "core/util/error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>

namespace comera {

nlohmann::json DataConfig::to_json() const {
  nlohmann::json j = {{"format", format}, {"dir", dir}, {"train", train}, {"eval", eval}, {"vocab", vocab},
          {"max_length", max_length}, {"train_limit", train_limit}, {"eval_limit", eval_limit}, {"labels", labels}};
  if (format == "codesearchnet") {
    j["languages"] = languages;
    j["examples"] = examples;
  }
  return j;
}

DataConfig read_data_config(const ConfigReader& r) {
  DataConfig c;
  c.format = r.choice("format", c.format, {"pairs", "text", "codesearchnet"});
  const bool code = c.format == "codesearchnet";
  c.dir = r.string("dir", c.dir);
  c.train = r.string("train", code ? "train" : c.train);
  c.eval = r.string("eval", code ? "valid" : c.eval);
  if (code) {
    for (const auto* split : {&c.train, &c.eval}) {
      const auto& splits = codesearchnet_splits();
      if (std::find(splits.begin(), splits.end(), *split) == splits.end())
        throw Error(r.key_path(split == &c.train ? "train" : "eval") + ": '" + *split +
                    "' is not a CodeSearchNet split (train, valid, test)");
    }
    if (r.has("languages")) {
      const auto& list = r.value("languages");
      if (!list.is_array() || list.empty())
        throw Error(r.key_path("languages") + ": expected a non-empty list such as [\"python\", \"go\"]");
      for (const auto& l : list) {
        if (!l.is_string() || l.get<std::string>().empty())
          throw Error(r.key_path("languages") + ": expected language names, got " + l.dump());
        c.languages.push_back(l.get<std::string>());
      }
    }
    c.examples = r.choice("examples", c.examples, code_example_names());
  }
  c.vocab = r.string("vocab", c.vocab);
  c.max_length = r.integer("max_length", c.max_length, 4);
  c.train_limit = r.integer("train_limit", 0, 0);
  c.eval_limit = r.integer("eval_limit", 0, 0);
  if (r.has("labels")) {
    if (c.format != "pairs")
      throw Error(r.key_path("labels") + ": filters sentence pairs by gold label; data.format " +
                  c.format + " has none (remove data.labels)");
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

void require_file(const std::string& file, const DataConfig& config) {
  if (std::filesystem::exists(file)) return;
  std::string fix = "check data.dir / --data and the data.train / data.eval names";
  if (config.dir.empty())
    fix = config.format == "text" ? "run `comera data build-wordnet` to build the default task"
                                  : "run `comera data build-pairs` to build the code/docstring task";
  throw Error(file + " not found (" + fix + ")");
}

template <class T>
void limit_to(std::vector<T>& examples, int64_t limit) {
  if (limit > 0 && static_cast<int64_t>(examples.size()) > limit) examples.resize(static_cast<size_t>(limit));
}

std::vector<PairExample> read_pairs(const std::string& file, int64_t limit,
                                    const std::vector<std::string>& labels) {
  auto examples = read_mnli(file);
  if (!labels.empty()) {
    examples.erase(std::remove_if(examples.begin(), examples.end(),
                                  [&](const PairExample& e) {
                                    return std::find(labels.begin(), labels.end(),
                                                     nli_label_name(e.label)) == labels.end();
                                  }),
                   examples.end());
  }
  limit_to(examples, limit);
  return examples;
}

std::shared_ptr<const TokenDataset> load_split(const std::string& file, int64_t limit,
                                               const DataConfig& config,
                                               const WordPieceTokenizer& tokenizer) {
  if (config.format == "codesearchnet") {
    const auto dir = std::filesystem::path(file).parent_path().string();
    const auto split = std::filesystem::path(file).filename().string();
    if (config.dir.empty() && !std::filesystem::exists(dir))
      throw Error(dir + " not found (run `comera data code-corpus` to build the code corpus)");
    return std::make_shared<CodeDataset>(CodeDataset::encode(
        read_codesearchnet(dir, split, config.languages, limit), parse_code_examples(config.examples),
        tokenizer, config.max_length));
  }
  require_file(file, config);
  if (config.format == "text") {
    auto examples = read_text_jsonl(file);
    limit_to(examples, limit);
    return std::make_shared<TextDataset>(TextDataset::encode(examples, tokenizer, config.max_length));
  }
  return std::make_shared<PairDataset>(
      PairDataset::encode(read_pairs(file, limit, config.labels), tokenizer, config.max_length));
}

}  // namespace

TaskData load_task_data(const DataConfig& config) {
  const std::filesystem::path dir = !config.dir.empty()                 ? config.dir
                                    : config.format == "text"          ? default_wordnet_dir()
                                    : config.format == "codesearchnet" ? default_code_corpus_dir()
                                                                       : default_pairs_dir();
  const auto tokenizer =
      WordPieceTokenizer::from_file(config.vocab.empty() ? default_vocab_path() : config.vocab);
  const auto train_file = (dir / config.train).string(), eval_file = (dir / config.eval).string();
  const auto train = load_split(train_file, config.train_limit, config, tokenizer);
  const auto eval = load_split(eval_file, config.eval_limit, config, tokenizer);
  TaskData data;
  data.train = train;
  data.eval = eval;
  data.info.vocab_size = tokenizer.size();
  data.info.mask_id = tokenizer.id("[MASK]");
  data.info.special_ids = {tokenizer.pad_id(), tokenizer.cls_id(), tokenizer.sep_id()};
  data.info.max_length = config.max_length;
  data.info.classes = std::max(train->classes(), eval->classes());
  data.info.segments =
      config.format == "text" || (config.format == "codesearchnet" && config.examples == "unimodal") ? 1 : 2;
  data.train_file = train_file;
  data.eval_file = eval_file;
  return data;
}

}  // namespace comera
