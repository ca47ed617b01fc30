#pragma once
// The data formats `data.format` names (single texts, sentence pairs, CodeSearchNet, Criteo
// click logs built in; more registered at run time): each owns its keys of the data section
// and loads both splits for the trainer.
#include "core/data/task_data.h"

#include <nlohmann/json_fwd.hpp>

#include <memory>
#include <string>
#include <vector>

namespace comera {

class ConfigReader;

class DataFormat {
 public:
  virtual ~DataFormat() = default;
  virtual std::string name() const = 0;
  // data.train and data.eval when the section names none.
  virtual std::string default_train() const = 0;
  virtual std::string default_eval() const = 0;
  // Its own keys of the data section, beside the shared ones (format, dir, train, eval, vocab,
  // max_length, train_limit, eval_limit): another format's key is an error naming both.
  virtual std::vector<std::string> keys() const { return {}; }
  // Those keys, complete with defaults; `config` holds the shared settings, read already.
  // Errors name the key and the fix.
  virtual nlohmann::json read(const ConfigReader& data, const DataConfig& config) const = 0;
  // Both splits. Errors name the missing file and how to make it.
  virtual TaskData load(const DataConfig& config) const = 0;
  // Throws as load would when a file it reads is missing, reading none: what a sweep checks
  // before it queues trials that would each fail.
  virtual void require_files(const DataConfig& config) const = 0;
  // The folder its files are read from (data.dir, or the format's default); "" for none.
  virtual std::string folder(const DataConfig& config) const = 0;
};

// Adds a format (a name already taken is an error).
void register_data_format(std::shared_ptr<const DataFormat> format);
// Throws comera::Error listing the known formats.
const DataFormat& find_data_format(const std::string& name);
std::vector<std::string> data_format_names();
std::vector<std::shared_ptr<const DataFormat>> data_formats();

// The built-in formats, one file each.
std::shared_ptr<const DataFormat> text_format();
std::shared_ptr<const DataFormat> pairs_format();
std::shared_ptr<const DataFormat> codesearchnet_format();
std::shared_ptr<const DataFormat> criteo_format();

}  // namespace comera
