#pragma once
// Criteo click logs (the Kaggle display-advertising format): one example per line,
// tab-separated: label (0/1), 13 integer features, 26 categorical features as 8-digit hex; any
// feature may be empty. Integers: empty -> 0, negatives clamped to 0, then log(1+x).
// Categoricals: empty -> 0, the hex value modulo its table's size (the reference's hashing
// trick). Read as a stream (plain or .gz) with bounded memory, optionally shuffled within a
// buffer; or loaded compactly as a Dataset whose batches hold "dense" (B, 13) float,
// "sparse" (B, 26) int64 and "labels" (B) float.
#include "core/data/dataset.h"
#include "core/util/gzip_lines.h"
#include "core/util/random.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace comera {

// The Criteo Kaggle table sizes C1..C26 (the reference's preprocessing of train.txt).
const std::vector<int64_t>& criteo_kaggle_table_sizes();

struct CriteoFormat {
  int64_t dense_features = 13;
  std::vector<int64_t> table_sizes;  // one per categorical feature (Kaggle: 26)
};

struct ClickLine {
  float label = 0;
  std::vector<float> dense;   // log(1 + max(0, x))
  std::vector<int64_t> ids;   // in [0, table size)
};

// Parses one line (no newline) into `out`; returns "" or what is wrong with it ("field 15 is
// 'xyz', not a hexadecimal id").
std::string parse_criteo_line(std::string_view line, const CriteoFormat& format, ClickLine& out);

// Line ranges [begin, end) of one file, 0-based.
struct LineRange {
  int64_t begin = 0, end = -1;  // end -1: to the end of the file
};

// The reference's split of the Kaggle train.txt: `days` contiguous days (divmod of the line
// count, the first `remainder` days one line longer); train = all days but the last; the last
// day halved, test = its first half (rounded up), validation = the rest.
struct DaySplit {
  LineRange train, test, validation;
};
DaySplit criteo_day_split(int64_t total_lines, int64_t days = 7);

struct CriteoReadOptions {
  LineRange lines;
  bool skip_malformed = false;  // count and skip bad lines instead of failing on the first
  int64_t shuffle_buffer = 0;   // > 1: emit lines in random order within a buffer this size
  uint64_t seed = 0;            // of the shuffle
};

// Streams one file (".gz" or plain: zlib reads both). Memory: one line plus the buffer.
class CriteoReader {
 public:
  // Throws when the file cannot be opened, naming it.
  CriteoReader(std::string path, CriteoFormat format, CriteoReadOptions options = {});
  ~CriteoReader();
  CriteoReader(const CriteoReader&) = delete;
  CriteoReader& operator=(const CriteoReader&) = delete;

  // The next example; false at the end of the range. A malformed line throws "file:line: ..."
  // unless skip_malformed.
  bool next(ClickLine& out);
  int64_t skipped() const { return skipped_; }  // malformed lines skipped so far
  const std::string& first_skipped() const { return first_skipped_; }  // "file:line: problem"
  int64_t lines_read() const { return line_; }

 private:
  bool next_in_order(ClickLine& out);

  std::string path_;
  CriteoFormat format_;
  CriteoReadOptions options_;
  std::unique_ptr<GzipLineReader> source_;
  std::string line_text_;
  int64_t line_ = 0, skipped_ = 0;
  std::string first_skipped_;
  std::vector<ClickLine> buffer_;
  Rng rng_;
  bool drained_ = false;
};

// Throws unless every table's ids fit the 32 bits ClickDataset stores them in.
void check_click_ids(const CriteoFormat& format);

// Examples held compactly in memory (label, floats, int32 ids: 157 bytes per Kaggle line).
class ClickDataset : public Dataset {
 public:
  explicit ClickDataset(CriteoFormat format);
  void add(const ClickLine& line);
  int64_t size() const override { return static_cast<int64_t>(labels_.size()); }
  Batch batch(const std::vector<int64_t>& indices) const override;
  std::string unit() const override { return "click lines"; }
  const CriteoFormat& format() const { return format_; }

 private:
  CriteoFormat format_;
  std::vector<uint8_t> labels_;
  std::vector<float> dense_;
  std::vector<int32_t> ids_;
};

// The malformed lines a read skipped: how many, and the first ("file:line: problem").
struct SkippedLines {
  int64_t count = 0;
  std::string first;
};

// Reads a range of a file into a ClickDataset (at most `limit` examples; 0 = all). `skipped`,
// when given, receives the malformed lines skipped.
std::shared_ptr<ClickDataset> load_click_dataset(const std::string& path, const CriteoFormat& format,
                                                 const CriteoReadOptions& options, int64_t limit = 0,
                                                 SkippedLines* skipped = nullptr);

// The examples a range holds, read through once (a streamed log's epoch length); `skipped` as
// above. Throws on the first malformed line unless options.skip_malformed.
int64_t count_click_lines(const std::string& path, const CriteoFormat& format, const CriteoReadOptions& options,
                          SkippedLines* skipped = nullptr);

}  // namespace comera
