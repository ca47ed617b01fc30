#include "search/cli/bench_child.h"

#include "core/training/method.h"
#include "core/util/config_reader.h"
#include "core/util/device.h"
#include "core/util/error.h"
#include "core/util/process.h"

#include <filesystem>

namespace comera::cli {

ExperimentConfig bench_step_experiment(const std::string& file, const std::string& method,
                                       const std::string& method_settings, bool dense, const std::string& device) {
  auto json = read_json_file(file);
  if (!method.empty()) json["method"] = method;
  if (!method_settings.empty()) {
    try {
      json["method_settings"] = nlohmann::json::parse(method_settings);
    } catch (const nlohmann::json::exception& ex) {
      throw Error("--method-settings: not JSON (" + std::string(ex.what()) +
                  "); give an object such as '{\"lte\": {\"heads\": 4}}'");
    }
  }
  if (dense) {
    try {
      json = dense_build(std::move(json));
    } catch (const Error& e) {
      throw Error("--dense: " + std::string(e.what()));
    }
  }
  auto e = parse_experiment(json, file);
  e.training.device = parse_device(device).str();
  return e;
}

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
