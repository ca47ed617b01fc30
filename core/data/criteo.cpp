#include "core/data/criteo.h"

#include "core/util/error.h"
#include "core/util/gzip_lines.h"
#include "core/util/random.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace comera {

namespace {

bool parse_integer(std::string_view s, int64_t& value) {
  if (s.empty()) return value = 0, true;
  size_t i = 0;
  const bool negative = s[0] == '-';
  if (negative) ++i;
  if (i == s.size() || s.size() - i > 18) return false;
  value = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    value = value * 10 + (s[i] - '0');
  }
  if (negative) value = -value;
  return true;
}

bool parse_hex(std::string_view s, uint64_t& value) {
  if (s.empty()) return value = 0, true;
  if (s.size() > 8) return false;
  value = 0;
  for (const char c : s) {
    int digit;
    if (c >= '0' && c <= '9') digit = c - '0';
    else if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') digit = c - 'A' + 10;
    else return false;
    value = value * 16 + static_cast<uint64_t>(digit);
  }
  return true;
}

}  // namespace

const std::vector<int64_t>& criteo_kaggle_table_sizes() {
  static const std::vector<int64_t> sizes = {
      1460, 583, 10131227, 2202608, 305, 24, 12517, 633, 3, 93145, 5683, 8351593, 3194,
      27, 14992, 5461306, 10, 5652, 2173, 4, 7046547, 18, 15, 286181, 105, 142572};
  return sizes;
}

std::string parse_criteo_line(std::string_view line, const CriteoFormat& format, ClickLine& out) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.empty()) return "an empty line";
  const size_t expected = 1 + static_cast<size_t>(format.dense_features) + format.table_sizes.size();
  std::vector<std::string_view> fields;
  fields.reserve(expected);
  for (size_t start = 0;;) {
    const size_t tab = line.find('\t', start);
    fields.push_back(line.substr(start, tab == std::string_view::npos ? std::string_view::npos : tab - start));
    if (tab == std::string_view::npos) break;
    start = tab + 1;
  }
  if (fields.size() != expected)
    return std::to_string(fields.size()) + " tab-separated fields, expected " + std::to_string(expected) +
           " (label, " + std::to_string(format.dense_features) + " integers, " +
           std::to_string(format.table_sizes.size()) + " hexadecimal categoricals)";
  if (fields[0] != "0" && fields[0] != "1")
    return "the label is '" + std::string(fields[0]) + "', not 0 or 1";
  out.label = fields[0] == "1" ? 1.0f : 0.0f;
  out.dense.resize(static_cast<size_t>(format.dense_features));
  for (int64_t j = 0; j < format.dense_features; ++j) {
    int64_t x;
    const auto f = fields[1 + static_cast<size_t>(j)];
    if (!parse_integer(f, x))
      return "field " + std::to_string(j + 2) + " is '" + std::string(f) + "', not an integer";
    out.dense[static_cast<size_t>(j)] = static_cast<float>(std::log1p(static_cast<double>(std::max<int64_t>(0, x))));
  }
  out.ids.resize(format.table_sizes.size());
  for (size_t t = 0; t < format.table_sizes.size(); ++t) {
    uint64_t h;
    const auto f = fields[1 + static_cast<size_t>(format.dense_features) + t];
    if (!parse_hex(f, h))
      return "field " + std::to_string(2 + format.dense_features + static_cast<int64_t>(t)) + " is '" +
             std::string(f) + "', not an 8-digit hexadecimal id";
    out.ids[t] = static_cast<int64_t>(h % static_cast<uint64_t>(format.table_sizes[t]));
  }
  return "";
}

DaySplit criteo_day_split(int64_t total_lines, int64_t days) {
  if (days < 2 || total_lines < days)
    throw Error("the day split needs at least 2 days and a line per day (" +
                std::to_string(total_lines) + " lines, " + std::to_string(days) + " days)");
  const int64_t per_day = total_lines / days, extra = total_lines % days;
  // Days 0..extra-1 have one line more.
  int64_t train_end = 0;
  for (int64_t d = 0; d + 1 < days; ++d) train_end += per_day + (d < extra ? 1 : 0);
  const int64_t last_day = total_lines - train_end;
  const int64_t test_end = train_end + (last_day + 1) / 2;
  return {{0, train_end}, {train_end, test_end}, {test_end, total_lines}};
}

CriteoReader::CriteoReader(std::string path, CriteoFormat format, CriteoReadOptions options)
    : path_(std::move(path)), format_(std::move(format)), options_(options),
      rng_(options.seed) {
  if (format_.table_sizes.empty()) throw Error("Criteo reader: no table sizes given");
  for (const int64_t size : format_.table_sizes)
    if (size < 1) throw Error("Criteo reader: table sizes must be >= 1");
  try {
    source_ = std::make_unique<GzipLineReader>(path_);
  } catch (const Error&) {
    throw Error(path_ + ": cannot open the click log (check the path; `comera data synth-criteo` "
                "writes a synthetic one)");
  }
}

CriteoReader::~CriteoReader() = default;

bool CriteoReader::next_in_order(ClickLine& out) {
  while (true) {
    if (options_.lines.end >= 0 && line_ >= options_.lines.end) return false;
    if (!source_->next(line_text_)) return false;
    ++line_;
    if (line_ <= options_.lines.begin) continue;
    const auto problem = parse_criteo_line(line_text_, format_, out);
    if (problem.empty()) return true;
    const auto where = path_ + ":" + std::to_string(line_) + ": " + problem;
    if (!options_.skip_malformed)
      throw Error(where + " (fix the line, or set data.criteo.skip_malformed to skip such lines and count them)");
    if (skipped_++ == 0) first_skipped_ = where;
  }
}

bool CriteoReader::next(ClickLine& out) {
  if (options_.shuffle_buffer <= 1) return next_in_order(out);
  const auto capacity = static_cast<size_t>(options_.shuffle_buffer);
  while (!drained_ && buffer_.size() < capacity) {
    ClickLine line;
    if (!next_in_order(line)) {
      drained_ = true;
      break;
    }
    buffer_.push_back(std::move(line));
  }
  if (buffer_.empty()) return false;
  // A random line of the buffer goes out; the next line read takes its place.
  const size_t pick = static_cast<size_t>(rng_.below(buffer_.size()));
  std::swap(buffer_[pick], buffer_.back());
  out = std::move(buffer_.back());
  buffer_.pop_back();
  return true;
}

void check_click_ids(const CriteoFormat& format) {
  for (const int64_t size : format.table_sizes)
    if (size > std::numeric_limits<int32_t>::max())
      throw Error("a table of " + std::to_string(size) + " rows does not fit the dataset's 32-bit ids");
}

ClickDataset::ClickDataset(CriteoFormat format) : format_(std::move(format)) { check_click_ids(format_); }

void ClickDataset::add(const ClickLine& line) {
  labels_.push_back(line.label > 0.5f ? 1 : 0);
  dense_.insert(dense_.end(), line.dense.begin(), line.dense.end());
  for (const int64_t id : line.ids) ids_.push_back(static_cast<int32_t>(id));
}

Batch ClickDataset::batch(const std::vector<int64_t>& indices) const {
  const auto n = static_cast<int64_t>(indices.size());
  const int64_t nd = format_.dense_features, nt = static_cast<int64_t>(format_.table_sizes.size());
  auto dense = at::empty({n, nd}, at::kFloat);
  auto sparse = at::empty({n, nt}, at::kLong);
  auto labels = at::empty({n}, at::kFloat);
  float* d = dense.data_ptr<float>();
  int64_t* s = sparse.data_ptr<int64_t>();
  float* l = labels.data_ptr<float>();
  for (int64_t i = 0; i < n; ++i) {
    const auto k = static_cast<size_t>(indices[static_cast<size_t>(i)]);
    l[i] = labels_[k];
    std::copy_n(dense_.begin() + static_cast<std::ptrdiff_t>(k * nd), nd, d + i * nd);
    for (int64_t t = 0; t < nt; ++t) s[i * nt + t] = ids_[k * static_cast<size_t>(nt) + static_cast<size_t>(t)];
  }
  Batch b(n);
  b.set("dense", dense);
  b.set("sparse", sparse);
  b.set("labels", labels);
  return b;
}

std::shared_ptr<ClickDataset> load_click_dataset(const std::string& path, const CriteoFormat& format,
                                                 const CriteoReadOptions& options, int64_t limit,
                                                 SkippedLines* skipped) {
  CriteoReader reader(path, format, options);
  auto data = std::make_shared<ClickDataset>(format);
  ClickLine line;
  while ((limit <= 0 || data->size() < limit) && reader.next(line)) data->add(line);
  if (skipped) *skipped = {reader.skipped(), reader.first_skipped()};
  return data;
}

int64_t count_click_lines(const std::string& path, const CriteoFormat& format, const CriteoReadOptions& options,
                          SkippedLines* skipped) {
  auto in_order = options;
  in_order.shuffle_buffer = 0;
  CriteoReader reader(path, format, in_order);
  int64_t examples = 0;
  for (ClickLine line; reader.next(line);) ++examples;
  if (skipped) *skipped = {reader.skipped(), reader.first_skipped()};
  return examples;
}

}  // namespace comera
