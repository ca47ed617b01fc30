#pragma once
// CodeSearchNet's function records (github/CodeSearchNet): JSON lines, one function each, as
// the release lays them out, {root}/{language}/final/jsonl/{train,valid,test}/
// {language}_{split}_{k}.jsonl.gz, read directly (gzip or plain). Fields: repo, path,
// func_name, original_string, language, code, code_tokens, docstring, docstring_tokens, sha,
// url, partition; the widely used mirror's names are read too (repository_name,
// func_path_in_repository, whole_func_string, func_code_string, func_code_tokens,
// func_documentation_string, func_documentation_tokens, split_name, func_code_url).
// `comera data code-corpus` (code_corpus.h) writes the same schema and layout.
#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace comera {

struct CodeFunction {
  std::string repo, path, func_name, original_string, language, code, docstring, sha, url, partition;
  std::vector<std::string> code_tokens, docstring_tokens;

  // The release's field names; empty sha and token lists are written as "" and [].
  nlohmann::json to_json() const;
};

// The six languages, in the release's spelling.
const std::vector<std::string>& codesearchnet_languages();
// The split names of the layout.
const std::vector<std::string>& codesearchnet_splits();

// One record from a parsed line; throws comera::Error saying what is wrong (no code, a field
// of the wrong type), without the file and line (the caller adds them).
CodeFunction parse_code_function(const nlohmann::json& row);

// Every record of one .jsonl or .jsonl.gz file, in order. Blank lines are skipped; a malformed
// line is an error naming file:line; `limit` > 0 stops after that many records.
std::vector<CodeFunction> read_codesearchnet_file(const std::string& path, int64_t limit = 0);

// The files of `split` under `root` for `languages` (empty = every language folder present),
// by language then by the number k. No file for a language asked for is an error naming the
// folder looked in.
std::vector<std::string> codesearchnet_files(const std::string& root, const std::string& split,
                                             const std::vector<std::string>& languages);

// The records of those files, at most `limit` of each language (0 = all), so that a sample
// of a multi-language corpus has every language in it.
std::vector<CodeFunction> read_codesearchnet(const std::string& root, const std::string& split,
                                             const std::vector<std::string>& languages,
                                             int64_t limit = 0);

}  // namespace comera
