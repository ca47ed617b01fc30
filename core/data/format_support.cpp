#include "core/data/format_support.h"

#include "core/data/wordpiece_tokenizer.h"
#include "core/util/config_reader.h"
#include "core/util/error.h"

#include <algorithm>
#include <filesystem>

namespace comera {

void require_file(const std::string& file, const std::string& key, const std::string& fix) {
  if (std::filesystem::is_directory(file))
    throw Error(file + " is a folder, not a file: " + key + " names a file in data.dir (" + fix + ")");
  if (std::filesystem::exists(file)) return;
  if (std::filesystem::exists(file + ".gz"))  // e.g. written by `comera data synth-criteo --gzip`
    throw Error(file + " not found, but " + file + ".gz is: name the compressed file in " + key +
                " (\"" + std::filesystem::path(file).filename().string() + ".gz\"); .gz files are read as they are");
  throw Error(file + " not found (" + fix + ")");
}

bool is_synthetic(const std::string& dir) {
  const auto summary = std::filesystem::path(dir) / "summary.json";
  return std::filesystem::exists(summary) && read_json_file(summary.string()).value("synthetic", false);
}

std::string split_fix(const DataConfig& config, const std::string& build) {
  return config.dir.empty() ? build : "check data.dir / --data and the data.train / data.eval names";
}

void require_token_files(const DataConfig& config, const std::string& dir, const std::string& fix) {
  require_file((std::filesystem::path(dir) / config.train).string(), "data.train", fix);
  require_file((std::filesystem::path(dir) / config.eval).string(), "data.eval", fix);
  require_vocab_file(config.vocab.empty() ? default_vocab_path() : config.vocab);
}

TaskData load_token_task(const DataConfig& config, const std::string& dir, int64_t segments,
                         const SplitLoader& load_split) {
  const auto tokenizer =
      WordPieceTokenizer::from_file(config.vocab.empty() ? default_vocab_path() : config.vocab);
  TaskData data;
  data.train_file = (std::filesystem::path(dir) / config.train).string();
  data.eval_file = (std::filesystem::path(dir) / config.eval).string();
  const auto train = load_split(data.train_file, "data.train", config.train_limit, tokenizer, data.notes);
  const auto eval = load_split(data.eval_file, "data.eval", config.eval_limit, tokenizer, data.notes);
  data.train = train;
  data.eval = eval;
  data.info.vocab_size = tokenizer.size();
  data.info.mask_id = tokenizer.id("[MASK]");
  data.info.special_ids = {tokenizer.pad_id(), tokenizer.cls_id(), tokenizer.sep_id()};
  data.info.max_length = config.max_length;
  data.info.classes = std::max(train->classes(), eval->classes());
  data.info.segments = segments;
  data.synthetic = is_synthetic(dir);
  return data;
}

}  // namespace comera
