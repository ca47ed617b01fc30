#pragma once
// CLI subcommands register themselves here; `comera` dispatches on the first one or two words.
#include <cxxopts.hpp>

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace comera::cli {

struct Command {
  std::string name;     // "train", "bench layer", ...
  std::string summary;  // one line for `comera --help`
  std::function<int(int argc, char** argv)> run;
};

std::map<std::string, Command>& registry();

struct Register {
  Register(std::string name, std::string summary, std::function<int(int, char**)> run);
};

// Options every command takes (--help, --threads), with the program name "comera <name>".
cxxopts::Options make_options(const std::string& name, const std::string& description);
// Parses; prints help and returns nullopt on --help. Applies --threads.
std::optional<cxxopts::ParseResult> parse(cxxopts::Options& options, int argc, char** argv);

// A list flag (declared as cxxopts::value<std::string>): a comma list, and the flag may be
// repeated ("--where a --where b,c"); its default when not given. Every list flag is read
// through these (core/util/comma_list.h), so the errors name the flag.
std::vector<std::string> string_list_flag(const cxxopts::ParseResult& result, const std::string& flag);
std::vector<int64_t> int_list_flag(const cxxopts::ParseResult& result, const std::string& flag,
                              int64_t min = std::numeric_limits<int64_t>::min());
std::vector<double> number_list_flag(const cxxopts::ParseResult& result, const std::string& flag);

}  // namespace comera::cli
