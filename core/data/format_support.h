#pragma once
// What the data formats (data_format.h) share: the missing-file error, the first-N limit, the
// synthetic flag of a generated folder, and tokenized datasets of both splits.
#include "core/data/task_data.h"
#include "core/data/token_dataset.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace comera {

class WordPieceTokenizer;

// Throws unless `file` exists: `key` is the setting that names it ("data.train"), `fix` how to
// make it. A compressed copy beside a missing file gets its own message.
void require_file(const std::string& file, const std::string& key, const std::string& fix);

template <class T>
void limit_to(std::vector<T>& examples, int64_t limit) {
  if (limit > 0 && static_cast<int64_t>(examples.size()) > limit) examples.resize(static_cast<size_t>(limit));
}

// A generator wrote `dir` (its summary.json says "synthetic": true).
bool is_synthetic(const std::string& dir);

// One split's examples, encoded: `file` is dir/<data.train or data.eval>, `key` that setting;
// what reading left out goes into `notes` (TaskData::notes).
using SplitLoader = std::function<std::shared_ptr<const TokenDataset>(
    const std::string& file, const std::string& key, int64_t limit, const WordPieceTokenizer& tokenizer,
    std::vector<std::string>& notes)>;

// How to make a missing split: `build` (the command that makes the default task) when data.dir
// is unset, else a check of the settings that name it.
std::string split_fix(const DataConfig& config, const std::string& build);

// The files load_token_task reads from `dir`: both splits (require_file, with `fix`) and the
// vocabulary.
void require_token_files(const DataConfig& config, const std::string& dir, const std::string& fix);

// Both splits of a tokenized task in `dir` (data.dir, or the format's default), with the
// vocabulary's facts in info; `segments` is 1 for single texts, 2 for pairs.
TaskData load_token_task(const DataConfig& config, const std::string& dir, int64_t segments,
                         const SplitLoader& load_split);

}  // namespace comera
