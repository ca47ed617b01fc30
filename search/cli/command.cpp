#include "search/cli/command.h"

#include "core/util/allocator.h"
#include "core/util/threads.h"

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
      "threads", "Intra-op threads (0 = all cores)", cxxopts::value<int>()->default_value("0"));
  return options;
}

std::optional<cxxopts::ParseResult> parse(cxxopts::Options& options, int argc, char** argv) {
  auto result = options.parse(argc, argv);
  if (result.count("help")) {
    std::cout << options.help() << std::endl;
    return std::nullopt;
  }
  configure_threads(result["threads"].as<int>());
  retain_freed_memory();
  return result;
}

}  // namespace comera::cli
