#pragma once
// The data section of an experiment: which sentence-pair files to train and evaluate on (the
// default code/docstring task or MNLI itself, both in MNLI's file forms), with the vocabulary
// and the maximum length, and loading them as encoded datasets.
#include "core/data/pair_dataset.h"
#include "core/data/token_masking.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
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

struct TaskData {
  PairDataset train, eval;
  int64_t vocab_size = 0;
  int64_t mask_id = -1;              // [MASK], or -1 when the vocabulary has none
  std::vector<int64_t> special_ids;  // [PAD], [CLS], [SEP]: never masked
  std::string train_file, eval_file;
};

// Reads, tokenizes and encodes both splits; errors name the missing file and how to make it.
TaskData load_task_data(const DataConfig& config);

// The data's [MASK] and special ids and vocabulary size, for masked-LM training.
MaskingOptions masking_options(const TaskData& data);

}  // namespace comera
