#pragma once
// The data section of an experiment: which sentence-pair files to train and evaluate on (the
// default code/docstring task or MNLI itself, both in MNLI's file forms), with the vocabulary
// and the maximum length, and loading them as encoded datasets.
#include "core/data/pair_dataset.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>

namespace comera {

class ConfigReader;

struct DataConfig {
  std::string dir;                 // "" = the default task (data/pairs/pystdlib)
  std::string train = "train.jsonl";
  std::string eval = "dev.jsonl";  // MNLI: dev_matched.tsv or multinli_1.0_dev_matched.jsonl
  std::string vocab;               // "" = the default BERT vocabulary
  int64_t max_length = 128;
  int64_t train_limit = 0, eval_limit = 0;  // first N examples; 0 = all

  nlohmann::json to_json() const;
};

DataConfig read_data_config(const ConfigReader& reader);

struct TaskData {
  PairDataset train, eval;
  int64_t vocab_size = 0;
  std::string train_file, eval_file;
};

// Reads, tokenizes and encodes both splits; errors name the missing file and how to make it.
TaskData load_task_data(const DataConfig& config);

}  // namespace comera
