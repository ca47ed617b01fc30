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

// The experiment file of --config: as given when it is found from here; else a relative path
// read from home_dir(), where experiments/ ships (as `comera --help` says). Neither: an error.
std::string config_flag(const cxxopts::ParseResult& result);

// Refuses each of `others` given beside --`flag`, which would leave it unused; `what` says what
// --flag does instead ("measures the tensorized and dense builds at each of --batches").
void refuse_beside(const cxxopts::ParseResult& result, const std::string& flag, const std::vector<std::string>& others,
                   const std::string& what);

// A benchmark's --warmup (0 or more) and --repeats (1 or more), refused with the fix otherwise.
int warmup_flag(const cxxopts::ParseResult& result);
int repeats_flag(const cxxopts::ParseResult& result);

// A list flag (declared as cxxopts::value<std::string>): a comma list, and the flag may be
// repeated ("--where a --where b,c"); its default when not given. Every list flag is read
// through these (core/util/comma_list.h), so the errors name the flag.
std::vector<std::string> string_list_flag(const cxxopts::ParseResult& result, const std::string& flag);
std::vector<int64_t> int_list_flag(const cxxopts::ParseResult& result, const std::string& flag,
                              int64_t min = std::numeric_limits<int64_t>::min());
std::vector<double> number_list_flag(const cxxopts::ParseResult& result, const std::string& flag);

}  // namespace comera::cli
