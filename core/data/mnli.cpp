#include "core/data/mnli.h"

#include "core/util/error.h"
#include "core/util/gzip_lines.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <functional>
#include <optional>

namespace comera {
namespace {

// Thrown by a row parser for a malformed line; the reader adds file and line.
struct Malformed {
  std::string what;
};

// nullopt for "-": the annotators had no majority.
std::optional<NliLabel> parse_label(const std::string& text) {
  if (text == "entailment") return NliLabel::kEntailment;
  if (text == "neutral") return NliLabel::kNeutral;
  if (text == "contradiction") return NliLabel::kContradiction;
  if (text == "-") return std::nullopt;
  throw Malformed{"gold_label '" + text + "' is not entailment, neutral, contradiction or -"};
}

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> fields;
  size_t start = 0;
  for (size_t tab; (tab = line.find('\t', start)) != std::string::npos; start = tab + 1)
    fields.push_back(line.substr(start, tab - start));
  fields.push_back(line.substr(start));
  return fields;
}

// A row parser returns the example, or nullopt for a gold_label of "-".
using RowParser = std::function<std::optional<PairExample>(const std::string& line)>;
// Called with the first non-blank line of a file with a header; returns the row parser.
using HeaderParser = std::function<RowParser(const std::string& header)>;

std::vector<PairExample> read_lines(const std::string& path, const PairReadOptions& options,
                                    PairReadStats* stats, const HeaderParser& header,
                                    RowParser row) {
  GzipLineReader in(path);
  PairReadStats local;
  PairReadStats& s = stats ? *stats : local;
  s = PairReadStats{};
  std::vector<PairExample> examples;
  int64_t line_no = 0;
  for (std::string line; in.next(line);) {
    ++line_no;
    if (line_no == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);  // UTF-8 BOM
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    if (!row) {
      row = header(line);
      continue;
    }
    ++s.lines;
    try {
      auto example = row(line);
      if (!example) {
        ++s.no_gold_label;
        continue;
      }
      ++s.per_label[static_cast<size_t>(example->label)];
      examples.push_back(std::move(*example));
    } catch (const Malformed& m) {
      const std::string where = path + ":" + std::to_string(line_no) + ": " + m.what;
      if (!options.skip_malformed)
        throw Error(where + " (fix the line, or set data.skip_malformed to skip such lines and count them)");
      if (s.malformed++ == 0) s.first_malformed = where;
    }
  }
  if (!row) throw Error(path + " is empty: expected a header row naming the columns");
  s.examples = static_cast<int64_t>(examples.size());
  return examples;
}

RowParser tsv_columns(const std::string& path, const std::string& header) {
  const auto names = split_tabs(header);
  auto column = [&](const std::string& name, bool required) -> std::optional<size_t> {
    for (size_t i = 0; i < names.size(); ++i)
      if (names[i] == name) return i;
    if (!required) return std::nullopt;
    std::string all;
    for (const auto& n : names) all += (all.empty() ? "" : ", ") + n;
    throw Error(path + ": the header has no '" + name + "' column (columns: " + all +
                "); MNLI's TSV files name sentence1, sentence2 and gold_label (GLUE's test files "
                "carry no labels)");
  };
  const size_t s1 = *column("sentence1", true), s2 = *column("sentence2", true),
               gold = *column("gold_label", true);
  const auto id = column("pairID", false);
  const size_t needed = std::max({s1, s2, gold, id.value_or(0)}) + 1, columns = names.size();
  return [=](const std::string& line) -> std::optional<PairExample> {
    auto fields = split_tabs(line);
    if (fields.size() > columns || fields.size() < needed)
      throw Malformed{"has " + std::to_string(fields.size()) + " tab-separated fields, the header " +
                      std::to_string(columns)};
    auto label = parse_label(fields[gold]);
    if (!label) return std::nullopt;
    return PairExample{std::move(fields[s1]), std::move(fields[s2]), *label,
                       id ? std::move(fields[*id]) : std::string()};
  };
}

std::optional<PairExample> jsonl_row(const std::string& line) {
  nlohmann::json row;
  try {
    row = nlohmann::json::parse(line);
  } catch (const nlohmann::json::parse_error& e) {
    throw Malformed{std::string("is not valid JSON (") + e.what() + ")"};
  }
  if (!row.is_object()) throw Malformed{"is JSON but not an object"};
  auto text = [&](const char* name) {
    auto it = row.find(name);
    if (it == row.end() || !it->is_string())
      throw Malformed{std::string("has no string field '") + name + "'"};
    return it->get<std::string>();
  };
  auto label = parse_label(text("gold_label"));
  if (!label) return std::nullopt;
  auto id = row.find("pairID");
  return PairExample{text("sentence1"), text("sentence2"), *label,
                     id != row.end() && id->is_string() ? id->get<std::string>() : std::string()};
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

const char* nli_label_name(NliLabel label) {
  switch (label) {
    case NliLabel::kEntailment: return "entailment";
    case NliLabel::kNeutral: return "neutral";
    case NliLabel::kContradiction: return "contradiction";
  }
  throw Error("unknown NLI label " + std::to_string(static_cast<int64_t>(label)));
}

std::vector<PairExample> read_mnli_tsv(const std::string& path, const PairReadOptions& options,
                                       PairReadStats* stats) {
  return read_lines(path, options, stats,
                    [&](const std::string& header) { return tsv_columns(path, header); }, nullptr);
}

std::vector<PairExample> read_mnli_jsonl(const std::string& path, const PairReadOptions& options,
                                         PairReadStats* stats) {
  return read_lines(path, options, stats, nullptr, jsonl_row);
}

std::vector<PairExample> read_mnli(const std::string& path, const PairReadOptions& options,
                                   PairReadStats* stats) {
  const auto name = ends_with(path, ".gz") ? path.substr(0, path.size() - 3) : path;
  if (ends_with(name, ".jsonl")) return read_mnli_jsonl(path, options, stats);
  if (ends_with(name, ".tsv") || ends_with(name, ".txt")) return read_mnli_tsv(path, options, stats);
  throw Error(path + ": unknown pair file type; MNLI files end in .tsv, .txt or .jsonl (each may be gzip-compressed, "
              "with .gz after it)");
}

}  // namespace comera
