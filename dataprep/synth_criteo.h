#pragma once
// Synthetic click logs in exactly the Criteo format (criteo.h), since Criteo itself cannot be
// downloaded here: the Kaggle cardinalities (optionally scaled down), Zipf-skewed ids per table,
// and labels drawn from a hidden planted logistic model of a few integer and categorical
// features, whose own AUC is measured on the written lines. Everything it reports says
// "synthetic".
#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace comera {

struct SynthCriteoOptions {
  std::string out_dir;
  int64_t train_lines = 100000, eval_lines = 20000;
  double scale = 1;     // table sizes = Kaggle's x scale (small tables kept up to 4 rows)
  double zipf = 1.05;   // exponent of the id frequencies (id k drawn with weight (k+1)^-zipf)
  uint64_t seed = 1;
  bool gzip = false;    // train.txt.gz, eval.txt.gz
  // Called every so many lines: (lines written, of so many).
  std::function<void(int64_t, int64_t)> progress;
};

struct SynthCriteoSplit {
  std::string file;
  int64_t lines = 0, positives = 0;
  double planted_auc = 0;  // of the planted model's own probabilities on these lines
  // The same with one label-bearing table's term left out, by 0-based table: how much of the
  // signal a model loses if it learns nothing from that table.
  std::map<int64_t, double> planted_auc_without_table;
};

struct SynthCriteoSummary {
  std::vector<int64_t> table_sizes;
  SynthCriteoSplit train, eval;
  SynthCriteoOptions options;
  nlohmann::json to_json() const;  // with "synthetic": true
};

// The table sizes for `scale` (1: Kaggle's).
std::vector<int64_t> scaled_criteo_table_sizes(double scale);

// Writes out_dir/train.txt, eval.txt (or .gz) and summary.json, each whole or not at all; the
// same options give the same bytes.
SynthCriteoSummary write_synth_criteo(const SynthCriteoOptions& options);

}  // namespace comera
