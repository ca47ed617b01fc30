#include "core/data/text_dataset.h"

#include "core/util/error.h"
#include "core/util/gzip_lines.h"

#include <ATen/Parallel.h>
#include <nlohmann/json.hpp>

namespace comera {

std::vector<TextExample> read_text_jsonl(const std::string& path) {
  GzipLineReader in(path);
  std::vector<TextExample> examples;
  int64_t line_no = 0;
  for (std::string line; in.next(line);) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto fail = [&](const std::string& problem) {
      return Error(path + ":" + std::to_string(line_no) + ": " + problem +
                   " (each line must be a JSON object with \"text\" (a string) and \"label\" (an "
                   "integer >= 0))");
    };
    nlohmann::json row;
    try {
      row = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error& e) {
      throw fail(std::string("not valid JSON (") + e.what() + ")");
    }
    if (!row.is_object()) throw fail("not a JSON object");
    const auto text = row.find("text"), label = row.find("label");
    if (text == row.end() || !text->is_string()) throw fail("no \"text\" string");
    if (label == row.end() || !label->is_number_integer() || label->get<int64_t>() < 0)
      throw fail("no \"label\" integer >= 0");
    examples.push_back({text->get<std::string>(), label->get<int64_t>()});
  }
  return examples;
}

EncodedTokens encode_text(const WordPieceTokenizer& tokenizer, const std::string& text,
                          int64_t label, int64_t max_length) {
  if (max_length < 2)
    throw Error("text max_length " + std::to_string(max_length) +
                " leaves no room for [CLS] text [SEP]; use at least 2");
  auto tokens = tokenizer.encode(text);
  if (tokens.size() > static_cast<size_t>(max_length - 2)) tokens.resize(static_cast<size_t>(max_length - 2));
  EncodedTokens out;
  out.label = label;
  out.input_ids.reserve(tokens.size() + 2);
  out.input_ids.push_back(tokenizer.cls_id());
  out.input_ids.insert(out.input_ids.end(), tokens.begin(), tokens.end());
  out.input_ids.push_back(tokenizer.sep_id());
  out.segment_ids.assign(out.input_ids.size(), 0);
  return out;
}

TextDataset TextDataset::encode(const std::vector<TextExample>& examples,
                                const WordPieceTokenizer& tokenizer, int64_t max_length) {
  std::vector<EncodedTokens> texts(examples.size());
  at::parallel_for(0, static_cast<int64_t>(examples.size()), 256, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      texts[i] = encode_text(tokenizer, examples[i].text, examples[i].label, max_length);
  });
  return TextDataset(std::move(texts), tokenizer.pad_id());
}

}  // namespace comera
