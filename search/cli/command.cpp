#include "search/cli/command.h"

#include "core/util/allocator.h"
#include "core/util/comma_list.h"
#include "core/util/error.h"
#include "core/util/home_dir.h"
#include "core/util/threads.h"

#include <filesystem>
#include <iostream>

namespace comera::cli {

std::map<std::string, Command>& registry() {
  static std::map<std::string, Command> commands;
  return commands;
}

Register::Register(std::string name, std::string summary, std::function<int(int, char**)> run) {
  registry()[name] = Command{name, std::move(summary), std::move(run)};
}

cxxopts::Options make_options(const std::string& name, const std::string& description) {
  cxxopts::Options options("comera " + name, description);
  options.add_options()("h,help", "Show this help")(
      "threads", "Intra-op threads (0 = all cores; more than the cores are capped)",
      cxxopts::value<int>()->default_value("0"));
  return options;
}

namespace {

// The command-line word that held `value`: "--flag" for --flag value or --flag=value, else
// the positional argument it was.
std::string holder_of(const std::string& value, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (const auto eq = word.find('='); word.rfind("--", 0) == 0 && eq != std::string::npos && word.substr(eq + 1) == value)
      return word.substr(0, eq);
    if (word == value) return i > 1 && argv[i - 1][0] == '-' ? argv[i - 1] : "the argument";
  }
  return "an argument";
}

}  // namespace

std::optional<cxxopts::ParseResult> parse(cxxopts::Options& options, int argc, char** argv) {
  cxxopts::ParseResult result;
  const std::string help = " (see `" + options.program() + " --help`)";
  try {
    result = options.parse(argc, argv);
  } catch (const cxxopts::exceptions::incorrect_argument_type& e) {
    // cxxopts names the value only: name the flag that held it, too.
    const std::string what = e.what();
    const auto from = what.find(cxxopts::LQUOTE) + cxxopts::LQUOTE.size(), to = what.rfind(cxxopts::RQUOTE);
    const std::string value = what.substr(from, to - from);
    throw Error(holder_of(value, argc, argv) + " " + value + ": not a value of the kind it takes" + help);
  } catch (const cxxopts::exceptions::parsing& e) {
    throw Error(e.what() + help);
  }
  if (result.count("help")) {
    std::cout << options.help() << std::endl;
    return std::nullopt;
  }
  if (!result.unmatched().empty()) {
    const auto& word = result.unmatched().front();
    const auto flag = holder_of(word, argc, argv);
    // A yes/no flag takes its value after '=' only: "--kernels false" leaves "false" over.
    if ((word == "true" || word == "false") && flag.rfind("--", 0) == 0)
      throw Error("unexpected argument '" + word + "' after " + flag + ": give " + flag + "=" + word + help);
    throw Error("unexpected argument '" + word +
                "' (a value with spaces, such as a SQL statement, goes in quotes as one argument)" + help);
  }
  const int threads = result["threads"].as<int>();
  const int cores = available_cores();
  if (threads < 0)
    throw Error("--threads " + std::to_string(threads) + ": give 0 (all cores) or a count from 1 to " +
                std::to_string(cores));
  if (threads > cores)
    std::cerr << "note: --threads " << threads << " is more than the " << cores
              << " cores this process may use: using " << cores << std::endl;
  configure_threads(threads);
  retain_freed_memory();
  return result;
}

namespace {

// The flag's texts: each occurrence in order, or its default.
std::vector<std::string> occurrences(const cxxopts::ParseResult& result, const std::string& flag) {
  std::vector<std::string> texts;
  for (const auto& kv : result.arguments())
    if (kv.key() == flag) texts.push_back(kv.value());
  if (texts.empty()) texts.push_back(result[flag].as<std::string>());
  return texts;
}

}  // namespace

std::string config_flag(const cxxopts::ParseResult& result) {
  const auto file = result["config"].as<std::string>();
  if (const auto found = home_path(file); std::filesystem::exists(found)) return found;
  throw Error("--config " + file + ": no such file here or in " + home_dir() +
              " (where experiments/ is read from; set COMERA_HOME to use another folder)");
}

void refuse_beside(const cxxopts::ParseResult& result, const std::string& flag, const std::vector<std::string>& others,
                   const std::string& what) {
  for (const auto& other : others)
    if (result.count(other))
      throw Error("--" + other + " does not go with --" + flag + ", which " + what + " (drop --" + other +
                  ", or --" + flag + ")");
}

int warmup_flag(const cxxopts::ParseResult& result) {
  const int warmup = result["warmup"].as<int>();
  if (warmup < 0) throw Error("--warmup " + std::to_string(warmup) + ": give 0 or more untimed runs");
  return warmup;
}

int repeats_flag(const cxxopts::ParseResult& result) {
  const int repeats = result["repeats"].as<int>();
  if (repeats < 1) throw Error("--repeats " + std::to_string(repeats) + ": give at least 1 timed run");
  return repeats;
}

std::vector<std::string> string_list_flag(const cxxopts::ParseResult& result, const std::string& flag) {
  std::vector<std::string> out;
  for (const auto& text : occurrences(result, flag))
    for (auto& item : split_list(text, "--" + flag)) out.push_back(std::move(item));
  return out;
}

std::vector<int64_t> int_list_flag(const cxxopts::ParseResult& result, const std::string& flag,
                              int64_t min) {
  std::vector<int64_t> out;
  for (const auto& text : occurrences(result, flag))
    for (int64_t v : int_list(text, "--" + flag, min)) out.push_back(v);
  return out;
}

std::vector<double> number_list_flag(const cxxopts::ParseResult& result, const std::string& flag) {
  std::vector<double> out;
  for (const auto& text : occurrences(result, flag))
    for (double v : number_list(text, "--" + flag)) out.push_back(v);
  return out;
}

}  // namespace comera::cli
