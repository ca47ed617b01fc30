#pragma once
// The data section of an experiment: which files to train and evaluate on (single texts, as the
// default WordNet task writes them, or sentence pairs in MNLI's file forms: the code/docstring
// task, the WordNet pairs, MNLI itself), with the vocabulary and the maximum length, and
// loading them as datasets for the trainer.
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
  // "text": single-text JSONL (text_dataset.h); "pairs": MNLI's TSV or JSONL (mnli.h);
  // "codesearchnet": CodeSearchNet's layout of function records (codesearchnet.h).
  // "criteo": click logs (criteo.h).
  std::string format = "pairs";
  // "" = the format's default task: text -> data/wordnet, pairs -> data/pairs/pystdlib,
  // codesearchnet -> data/code-corpus.
  std::string dir;
  // Files in dir; codesearchnet: split names (defaults "train" and "valid").
  std::string train = "train.jsonl";
  std::string eval = "dev.jsonl";  // MNLI: dev_matched.tsv or multinli_1.0_dev_matched.jsonl
  // codesearchnet: the languages read (empty = every language folder) and the examples made
  // of each function (code_dataset.h: bimodal, unimodal, both).
  std::vector<std::string> languages;
  std::string examples = "bimodal";
  std::string vocab;               // "" = the default BERT vocabulary
  int64_t max_length = 128;
  int64_t train_limit = 0, eval_limit = 0;  // first N examples; 0 = all
  // Pairs only: keep these gold labels (e.g. {"entailment"}: a docstring with its own code,
  // for masked-LM pre-training); empty = all.
  std::vector<std::string> labels;
  // Criteo click logs (criteo.h) only.
  struct Criteo {
    std::vector<int64_t> table_sizes;  // the ids' tables; default the Kaggle sizes
    // "files": train and eval are separate files; "days": the reference's day split of the one
    // file `train` (six days train, the seventh halved), eval its test or validation half.
    std::string split = "files";
    std::string eval_part = "test";  // "days": "test" | "validation"
    bool skip_malformed = false;     // count and skip malformed lines instead of failing
    // Read batches straight from the files each epoch (memory: the shuffle buffer) instead of
    // holding every example in memory; training shuffles within `shuffle_buffer` lines.
    bool stream = false;
    int64_t shuffle_buffer = 100000;
  } criteo;

  nlohmann::json to_json() const;
};

DataConfig read_data_config(const ConfigReader& reader);

// What a run trains and evaluates on. Shared, so that a trainer never outlives its data.
struct TaskData {
  std::shared_ptr<const Dataset> train, eval;
  DataInfo info;
  std::string train_file, eval_file;  // where they were read from ("" when made in memory)
  int64_t skipped = 0;                // malformed lines skipped (click logs with skip_malformed)
  bool synthetic = false;             // written by a generator (its summary.json says so)
};

// Reads, tokenizes and encodes both splits; errors name the missing file and how to make it.
// info.classes is the largest label of either split + 1.
TaskData load_task_data(const DataConfig& config);

}  // namespace comera
