#include "core/data/task_data.h"

#include "core/data/data_format.h"
#include "core/data/wordpiece_tokenizer.h"
#include "core/util/config_reader.h"
#include "core/util/error.h"

namespace comera {

nlohmann::json DataConfig::to_json() const {
  nlohmann::json j = {{"format", format}, {"dir", dir}, {"train", train}, {"eval", eval}, {"vocab", vocab},
                      {"max_length", max_length}, {"train_limit", train_limit}, {"eval_limit", eval_limit}};
  j.update(settings);
  return j;
}

DataConfig read_data_config(const ConfigReader& r) {
  DataConfig c;
  c.format = r.choice("format", c.format, data_format_names());
  const auto& format = find_data_format(c.format);
  c.dir = r.string("dir", c.dir);
  c.train = r.string("train", format.default_train());
  c.eval = r.string("eval", format.default_eval());
  c.vocab = r.string("vocab", c.vocab);
  c.max_length = r.integer("max_length", c.max_length, 4);
  c.train_limit = r.integer("train_limit", 0, 0);
  c.eval_limit = r.integer("eval_limit", 0, 0);
  const auto own = format.keys();
  for (const auto& other : data_formats())
    for (const auto& key : other->keys())
      if (r.has(key) && std::find(own.begin(), own.end(), key) == own.end())
        throw Error(r.key_path(key) + ": a setting of data.format " + other->name() + "; data.format " +
                    c.format + " has none (remove " + r.key_path(key) + ", or set data.format: " +
                    other->name() + ")");
  c.settings = format.read(r, c);
  r.finish();
  return c;
}

namespace {

// The config with the format's split names where it gives none.
DataConfig completed(const DataConfig& config, const DataFormat& format) {
  auto complete = config;
  if (complete.train.empty()) complete.train = format.default_train();
  if (complete.eval.empty()) complete.eval = format.default_eval();
  return complete;
}

}  // namespace

std::string describe_data(const TaskData& data) {
  std::string text = "data: " + std::string(data.synthetic ? "SYNTHETIC, " : "") + std::to_string(data.train->size()) +
                     " training " + data.train->unit() + " (" + data.train_file + "), " +
                     std::to_string(data.eval->size()) + " evaluation " + data.eval->unit() + " (" + data.eval_file + ")";
  for (const auto& note : data.notes) text += "\ndata: " + note;
  return text;
}

TaskData load_task_data(const DataConfig& config) {
  const auto& format = find_data_format(config.format);
  return format.load(completed(config, format));
}

std::vector<std::string> task_data_inputs(const DataConfig& config) {
  const auto& format = find_data_format(config.format);
  std::vector<std::string> inputs = {config.vocab.empty() ? default_vocab_path() : config.vocab};
  if (const auto folder = format.folder(completed(config, format)); !folder.empty()) inputs.push_back(folder + "/");
  return inputs;
}

void require_task_files(const DataConfig& config) {
  const auto& format = find_data_format(config.format);
  format.require_files(completed(config, format));
}

}  // namespace comera
