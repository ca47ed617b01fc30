#include "core/data/codesearchnet.h"

#include "core/util/error.h"
#include "core/util/gzip_lines.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>

namespace comera {

namespace fs = std::filesystem;

namespace {

// A field's name in the release and in the mirror ("" where the mirror has none).
struct FieldNames {
  const char* release;
  const char* mirror;
};

const nlohmann::json* field(const nlohmann::json& row, FieldNames names) {
  for (const char* name : {names.release, names.mirror}) {
    if (!*name) continue;
    const auto it = row.find(name);
    if (it != row.end() && !it->is_null()) return &*it;
  }
  return nullptr;
}

std::string text_field(const nlohmann::json& row, FieldNames names, bool required) {
  const auto* value = field(row, names);
  const std::string both = std::string("\"") + names.release + "\"" +
                           (*names.mirror ? std::string(" or \"") + names.mirror + "\"" : "");
  if (!value) {
    if (required) throw Error("no " + both + " string");
    return "";
  }
  if (!value->is_string()) throw Error(both + " is not a string");
  return value->get<std::string>();
}

std::vector<std::string> token_field(const nlohmann::json& row, FieldNames names) {
  const auto* value = field(row, names);
  if (!value) return {};
  const std::string both = std::string("\"") + names.release + "\" or \"" + names.mirror + "\"";
  if (!value->is_array()) throw Error(both + " is not a list of strings");
  std::vector<std::string> tokens;
  tokens.reserve(value->size());
  for (const auto& t : *value) {
    if (!t.is_string()) throw Error(both + " is not a list of strings");
    tokens.push_back(t.get<std::string>());
  }
  return tokens;
}

}  // namespace

nlohmann::json CodeFunction::to_json() const {
  return {{"repo", repo},
          {"path", path},
          {"func_name", func_name},
          {"original_string", original_string},
          {"language", language},
          {"code", code},
          {"code_tokens", code_tokens},
          {"docstring", docstring},
          {"docstring_tokens", docstring_tokens},
          {"sha", sha},
          {"url", url},
          {"partition", partition}};
}

const std::vector<std::string>& codesearchnet_languages() {
  static const std::vector<std::string> languages{"go", "java", "javascript", "php", "python", "ruby"};
  return languages;
}

const std::vector<std::string>& codesearchnet_splits() {
  static const std::vector<std::string> splits{"train", "valid", "test"};
  return splits;
}

CodeFunction parse_code_function(const nlohmann::json& row) {
  if (!row.is_object()) throw Error("not a JSON object");
  CodeFunction f;
  f.code = text_field(row, {"code", "func_code_string"}, true);
  f.language = text_field(row, {"language", ""}, true);
  f.repo = text_field(row, {"repo", "repository_name"}, false);
  f.path = text_field(row, {"path", "func_path_in_repository"}, false);
  f.func_name = text_field(row, {"func_name", ""}, false);
  f.original_string = text_field(row, {"original_string", "whole_func_string"}, false);
  f.docstring = text_field(row, {"docstring", "func_documentation_string"}, false);
  f.sha = text_field(row, {"sha", ""}, false);
  f.url = text_field(row, {"url", "func_code_url"}, false);
  f.partition = text_field(row, {"partition", "split_name"}, false);
  f.code_tokens = token_field(row, {"code_tokens", "func_code_tokens"});
  f.docstring_tokens = token_field(row, {"docstring_tokens", "func_documentation_tokens"});
  return f;
}

std::vector<CodeFunction> read_codesearchnet_file(const std::string& path, int64_t limit) {
  GzipLineReader in(path);
  std::vector<CodeFunction> functions;
  std::string line;
  while ((limit <= 0 || static_cast<int64_t>(functions.size()) < limit) && in.next(line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      nlohmann::json row;
      try {
        row = nlohmann::json::parse(line);
      } catch (const nlohmann::json::parse_error& e) {
        throw Error(std::string("not valid JSON (") + e.what() + ")");
      }
      functions.push_back(parse_code_function(row));
    } catch (const Error& e) {
      throw Error(path + ":" + std::to_string(in.line_number()) + ": " + e.what() +
                  " (each line must be a CodeSearchNet JSON object with at least \"code\" and "
                  "\"language\" strings)");
    }
  }
  return functions;
}

std::vector<std::string> codesearchnet_files(const std::string& root, const std::string& split,
                                             const std::vector<std::string>& languages) {
  if (!fs::is_directory(root))
    throw Error(root + " is not a folder (expected CodeSearchNet's layout, {language}/final/jsonl/"
                "{train,valid,test}/; build one with `comera data code-corpus`)");
  std::vector<std::string> chosen = languages;
  if (chosen.empty()) {
    for (const auto& entry : fs::directory_iterator(root))
      if (fs::is_directory(entry.path() / "final" / "jsonl" / split))
        chosen.push_back(entry.path().filename().string());
    std::sort(chosen.begin(), chosen.end());
    if (chosen.empty())
      throw Error(root + " has no {language}/final/jsonl/" + split + "/ folder (is it a CodeSearchNet "
                  "root? build one with `comera data code-corpus`)");
  }
  std::vector<std::string> files;
  for (const auto& language : chosen) {
    const fs::path dir = fs::path(root) / language / "final" / "jsonl" / split;
    const std::regex name(language + "_" + split + "_([0-9]+)\\.jsonl(\\.gz)?");
    std::vector<std::pair<int64_t, std::string>> found;
    if (fs::is_directory(dir))
      for (const auto& entry : fs::directory_iterator(dir)) {
        std::smatch m;
        const auto file = entry.path().filename().string();
        if (std::regex_match(file, m, name)) found.emplace_back(std::stoll(m[1].str()), entry.path().string());
      }
    if (found.empty())
      throw Error("no " + language + "_" + split + "_{k}.jsonl.gz file in " + dir.string() +
                  " (check data.dir and data.languages)");
    std::sort(found.begin(), found.end());
    // A part kept both plain and compressed (after `gunzip -k`) would be read twice.
    for (size_t i = 1; i < found.size(); ++i)
      if (found[i].first == found[i - 1].first)
        throw Error(found[i - 1].second + " and " + found[i].second + " hold the same part: remove one of them");
    for (auto& f : found) files.push_back(std::move(f.second));
  }
  return files;
}

std::vector<CodeFunction> read_codesearchnet(const std::string& root, const std::string& split,
                                             const std::vector<std::string>& languages, int64_t limit) {
  std::vector<CodeFunction> all;
  std::map<std::string, int64_t> taken;  // per language
  for (const auto& file : codesearchnet_files(root, split, languages)) {
    const auto language = fs::path(file).parent_path().parent_path().parent_path().parent_path().filename().string();
    auto& n = taken[language];
    if (limit > 0 && n >= limit) continue;
    auto part = read_codesearchnet_file(file, limit > 0 ? limit - n : 0);
    n += static_cast<int64_t>(part.size());
    all.insert(all.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
  }
  return all;
}

}  // namespace comera
