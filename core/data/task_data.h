#pragma once
// The data section of an experiment: which sentence-pair files to train and evaluate on (the
// default code/docstring task or MNLI itself, both in MNLI's file forms), with the vocabulary
// and the maximum length, and loading them as datasets for the trainer.
#include "core/data/data_info.h"
#include "core/data/dataset.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace comera {

class ConfigReader;

struct DataConfig {
  std::string dir;                 // "" = the default task (data/pairs/pystdlib)
  std::string train = "train.jsonl";
  std::string eval = "dev.jsonl";  // MNLI: dev_matched.tsv or multinli_1.0_dev_matched.jsonl
  std::string vocab;               // "" = the default BERT vocabulary
  int64_t max_length = 128;
  int64_t train_limit = 0, eval_limit = 0;  // first N examples; 0 = all
  // Keep only pairs with these gold labels (e.g. {"entailment"}: a docstring with its own
  // code, for masked-LM pre-training); empty = all.
  std::vector<std::string> labels;

  nlohmann::json to_json() const;
};

DataConfig read_data_config(const ConfigReader& reader);

// What a run trains and evaluates on. Shared, so that a trainer never outlives its data.
struct TaskData {
  std::shared_ptr<const Dataset> train, eval;
  DataInfo info;
  std::string train_file, eval_file;  // where they were read from ("" when made in memory)
};

// Reads, tokenizes and encodes both splits; errors name the missing file and how to make it.
TaskData load_task_data(const DataConfig& config);

}  // namespace comera
