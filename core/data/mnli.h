#pragma once
// Readers for sentence-pair classification files in MNLI's two published forms:
//  - TSV (GLUE's MNLI/*.tsv, multinli_1.0_*.txt): a header row naming the columns; sentence1,
//    sentence2 and gold_label are found by name, fields are split on tabs only (no quoting);
//  - JSONL (multinli_1.0_*.jsonl): one object per line with sentence1, sentence2, gold_label
//    (and optionally pairID).
// Either may be gzip-compressed (".gz" after the name).
// Labels: entailment = 0, neutral = 1, contradiction = 2. Rows whose gold_label is "-" (no
// annotator majority) are skipped and counted, as every MNLI loader does.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace comera {

enum class NliLabel : int64_t { kEntailment = 0, kNeutral = 1, kContradiction = 2 };
constexpr int64_t kNliClasses = 3;
const char* nli_label_name(NliLabel label);

struct PairExample {
  std::string sentence1, sentence2;
  NliLabel label = NliLabel::kEntailment;
  std::string pair_id;  // pairID when the file has one, else ""
};

struct PairReadOptions {
  // false: the first malformed line throws comera::Error naming file, line and problem.
  // true: malformed lines are skipped and counted in PairReadStats.
  bool skip_malformed = false;
};

struct PairReadStats {
  int64_t lines = 0;          // data lines read (header and blank lines not counted)
  int64_t examples = 0;       // returned
  int64_t no_gold_label = 0;  // gold_label "-", skipped
  int64_t malformed = 0;      // skipped (skip_malformed only)
  std::string first_malformed;  // "file:line: problem" of the first one skipped
  std::array<int64_t, kNliClasses> per_label{};
};

std::vector<PairExample> read_mnli_tsv(const std::string& path, const PairReadOptions& options = {},
                                       PairReadStats* stats = nullptr);
std::vector<PairExample> read_mnli_jsonl(const std::string& path,
                                         const PairReadOptions& options = {},
                                         PairReadStats* stats = nullptr);
// By extension (before any .gz): .jsonl -> JSONL; .tsv or .txt -> TSV; anything else is an error.
std::vector<PairExample> read_mnli(const std::string& path, const PairReadOptions& options = {},
                                   PairReadStats* stats = nullptr);

}  // namespace comera
