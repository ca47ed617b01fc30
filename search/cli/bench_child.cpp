#include "search/cli/bench_child.h"

#include "core/util/error.h"
#include "core/util/process.h"

#include <filesystem>

namespace comera::cli {

nlohmann::json bench_step_in_child(const std::vector<std::string>& flags) {
  std::vector<std::string> args{std::filesystem::read_symlink("/proc/self/exe").string(), "bench",
                                "step", "--json"};
  args.insert(args.end(), flags.begin(), flags.end());
  const auto child = run_process(args, "comera bench step");
  if (child.status != 0) {
    std::string command = "comera";
    for (size_t i = 1; i < args.size(); ++i) command += " " + args[i];
    throw Error("`" + command + "` failed (run it alone to see why)");
  }
  return nlohmann::json::parse(child.output);
}

}  // namespace comera::cli
