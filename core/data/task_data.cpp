#include "core/data/task_data.h"

#include "core/data/data_dirs.h"

#include "core/data/code_dataset.h"
#include "core/data/codesearchnet.h"
#include "core/data/click_stream.h"
#include "core/data/criteo.h"
#include "core/data/mnli.h"
#include "core/data/pair_dataset.h"
#include "core/data/text_dataset.h"
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
  if (format == "criteo")
    j["criteo"] = {{"table_sizes", criteo.table_sizes}, {"split", criteo.split},
                   {"eval_part", criteo.eval_part}, {"skip_malformed", criteo.skip_malformed},
                   {"stream", criteo.stream}};
  if (format == "criteo" && criteo.stream) j["criteo"]["shuffle_buffer"] = criteo.shuffle_buffer;
  return j;
}

DataConfig read_data_config(const ConfigReader& r) {
  DataConfig c;
  c.format = r.choice("format", c.format, {"pairs", "text", "codesearchnet", "criteo"});
  const bool code = c.format == "codesearchnet";
  if (c.format == "criteo") c.train = "train.txt", c.eval = "eval.txt";
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
  if (r.has("criteo")) {
    if (c.format != "criteo")
      throw Error(r.key_path("criteo") + ": settings of click logs; data.format is " + c.format +
                  " (set data.format: criteo, or remove data.criteo)");
    const auto k = r.object("criteo");
    if (k.has("table_sizes")) c.criteo.table_sizes = k.integers("table_sizes");
    c.criteo.split = k.choice("split", c.criteo.split, {"files", "days"});
    c.criteo.eval_part = k.choice("eval_part", c.criteo.eval_part, {"test", "validation"});
    c.criteo.skip_malformed = k.boolean("skip_malformed", c.criteo.skip_malformed);
    c.criteo.stream = k.boolean("stream", c.criteo.stream);
    c.criteo.shuffle_buffer = k.integer("shuffle_buffer", c.criteo.shuffle_buffer, 1);
    if (k.has("shuffle_buffer") && !c.criteo.stream)
      throw Error(k.key_path("shuffle_buffer") + ": only read when streaming (set data.criteo.stream "
                  "to true, or remove it: in memory the whole training set is shuffled)");
    k.finish();
  }
  if (c.format == "criteo" && c.criteo.table_sizes.empty()) c.criteo.table_sizes = criteo_kaggle_table_sizes();
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

// `key` is the setting that names the file ("data.train", "data.eval").
void require_file(const std::string& file, const DataConfig& config, const std::string& key) {
  if (std::filesystem::exists(file)) return;
  if (std::filesystem::exists(file + ".gz"))  // e.g. written by `comera data synth-criteo --gzip`
    throw Error(file + " not found, but " + file + ".gz is: name the compressed file in " + key +
                " (\"" + std::filesystem::path(file).filename().string() + ".gz\"); .gz files are read as they are");
  std::string fix = "check data.dir / --data and the data.train / data.eval names";
  if (config.format == "criteo")
    fix += "; for synthetic click logs run `comera data synth-criteo --out " + config.dir + "`";
  else if (config.dir.empty())
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

std::shared_ptr<const TokenDataset> load_split(const std::string& file, const std::string& key,
                                               int64_t limit, const DataConfig& config,
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
  require_file(file, config, key);
  if (config.format == "text") {
    auto examples = read_text_jsonl(file);
    limit_to(examples, limit);
    return std::make_shared<TextDataset>(TextDataset::encode(examples, tokenizer, config.max_length));
  }
  return std::make_shared<PairDataset>(
      PairDataset::encode(read_pairs(file, limit, config.labels), tokenizer, config.max_length));
}

// Click logs: both splits from two files, or from one file by the reference's day split.
TaskData load_click_data(const DataConfig& config) {
  if (config.dir.empty())
    throw Error("data.dir: click logs have no default folder (point it at the Criteo files, or "
                "write synthetic ones with `comera data synth-criteo`)");
  const std::filesystem::path dir = config.dir;
  CriteoFormat format;
  format.table_sizes = config.criteo.table_sizes;
  const auto train_file = (dir / config.train).string();
  const auto eval_file = config.criteo.split == "days" ? train_file : (dir / config.eval).string();
  require_file(train_file, config, "data.train");
  require_file(eval_file, config, "data.eval");
  CriteoReadOptions train_read, eval_read;
  train_read.skip_malformed = eval_read.skip_malformed = config.criteo.skip_malformed;
  if (config.criteo.split == "days") {
    const auto split = criteo_day_split(count_lines(train_file));
    train_read.lines = split.train;
    eval_read.lines = config.criteo.eval_part == "test" ? split.test : split.validation;
  }
  TaskData data;
  if (config.criteo.stream) {
    // Read afresh every epoch; the line counts give the epochs' steps.
    auto lines = [](const std::string& file, const LineRange& range) {
      return range.end >= 0 ? range.end - range.begin : count_lines(file) - range.begin;
    };
    data.train = std::make_shared<ClickStreamDataset>(train_file, format, train_read,
                                                      lines(train_file, train_read.lines),
                                                      config.criteo.shuffle_buffer, config.train_limit);
    data.eval = std::make_shared<ClickStreamDataset>(eval_file, format, eval_read,
                                                     lines(eval_file, eval_read.lines),
                                                     config.criteo.shuffle_buffer, config.eval_limit);
  } else {
    int64_t skipped_train = 0, skipped_eval = 0;
    data.train = load_click_dataset(train_file, format, train_read, config.train_limit, &skipped_train);
    data.eval = load_click_dataset(eval_file, format, eval_read, config.eval_limit, &skipped_eval);
    data.skipped = skipped_train + skipped_eval;
  }
  data.info.dense_features = format.dense_features;
  data.info.table_sizes = format.table_sizes;
  data.info.classes = 2;
  data.train_file = train_file;
  data.eval_file = eval_file;
  const auto summary = dir / "summary.json";
  data.synthetic = std::filesystem::exists(summary) && read_json_file(summary.string()).value("synthetic", false);
  return data;
}

}  // namespace

TaskData load_task_data(const DataConfig& config) {
  if (config.format == "criteo") return load_click_data(config);
  const std::filesystem::path dir = !config.dir.empty()                 ? config.dir
                                    : config.format == "text"          ? default_wordnet_dir()
                                    : config.format == "codesearchnet" ? default_code_corpus_dir()
                                                                       : default_pairs_dir();
  const auto tokenizer =
      WordPieceTokenizer::from_file(config.vocab.empty() ? default_vocab_path() : config.vocab);
  const auto train_file = (dir / config.train).string(), eval_file = (dir / config.eval).string();
  const auto train = load_split(train_file, "data.train", config.train_limit, config, tokenizer);
  const auto eval = load_split(eval_file, "data.eval", config.eval_limit, config, tokenizer);
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
  const auto summary = dir / "summary.json";
  data.synthetic = std::filesystem::exists(summary) && read_json_file(summary.string()).value("synthetic", false);
  return data;
}

}  // namespace comera
