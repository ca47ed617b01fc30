#pragma once
// CLI subcommands register themselves here; `comera` dispatches on the first one or two words.
#include <cxxopts.hpp>

#include <functional>
#include <map>
#include <optional>
#include <string>

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

}  // namespace comera::cli
