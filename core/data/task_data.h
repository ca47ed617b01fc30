#pragma once
// The data section of an experiment: its format (data_format.h), which files to train and
// evaluate on, the vocabulary and the maximum length; and loading them as datasets for the
// trainer.
#include "core/data/data_info.h"
#include "core/data/dataset.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace comera {

class ConfigReader;

struct DataConfig {
  // A registered format (data_format.h): "pairs" (MNLI's TSV or JSONL, mnli.h), "text"
  // (single-text JSONL, text_dataset.h), "codesearchnet" (codesearchnet.h), "criteo" (click
  // logs, criteo.h).
  std::string format = "pairs";
  // "" = the format's default folder (text: data/wordnet, pairs: data/pairs/pystdlib,
  // codesearchnet: data/code-corpus; click logs have none).
  std::string dir;
  // Files in dir (codesearchnet: split names); "" = the format's defaults.
  std::string train, eval;
  std::string vocab;  // "" = the default BERT vocabulary
  int64_t max_length = 128;
  int64_t train_limit = 0, eval_limit = 0;  // first N examples; 0 = all
  // The format's own keys, complete (DataFormat::read): pairs' labels, CodeSearchNet's
  // languages and examples, the click logs' criteo section.
  nlohmann::json settings = nlohmann::json::object();

  nlohmann::json to_json() const;
};

DataConfig read_data_config(const ConfigReader& reader);

// What a run trains and evaluates on. Shared, so that a trainer never outlives its data.
struct TaskData {
  std::shared_ptr<const Dataset> train, eval;
  DataInfo info;
  std::string train_file, eval_file;  // where they were read from ("" when made in memory)
  bool synthetic = false;             // written by a generator (its summary.json says so)
  // What reading left out, a sentence each naming its file ("dev.tsv: 185 rows without a gold
  // label ('-') left out"), so a shorter dataset is never a silent one.
  std::vector<std::string> notes;
};

// "data: 392702 training pairs (dir/train.tsv), 9815 evaluation pairs (dir/dev.tsv)", SYNTHETIC
// where it is, then the notes, one line each.
std::string describe_data(const TaskData& data);

// Reads, tokenizes and encodes both splits; errors name the missing file and how to make it.
// info.classes is the largest label of either split + 1.
TaskData load_task_data(const DataConfig& config);

// Throws the error load_task_data would for a missing file, reading none (DataFormat::require_files).
void require_task_files(const DataConfig& config);

// What load_task_data reads: the data folder (with a trailing '/', as OutputFile takes folders)
// and the vocabulary file; for checking that no output lands on them.
std::vector<std::string> task_data_inputs(const DataConfig& config);

}  // namespace comera
