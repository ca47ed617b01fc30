#include "search/sweep/trial_runner.h"

#include <nlohmann/json.hpp>

namespace comera::sweep {

TrialRunner::TrialRunner(ClaimedTrialOptions options, std::string device) : options_(std::move(options)) {
  if (!device.empty()) options_.device = std::move(device);
  options_.data = [this](const DataConfig& config) -> const TaskData& { return data(config); };
}

const TaskData& TrialRunner::data(const DataConfig& config) {
  const std::string key = config.to_json().dump();
  auto it = data_.find(key);
  if (it == data_.end()) {
    const auto say = [this](const std::string& text) {
      if (options_.on_message) options_.on_message(text);
    };
    say("loading data...");
    it = data_.emplace(key, load_task_data(config)).first;
    say(describe_data(it->second));
  }
  return it->second;
}

}  // namespace comera::sweep
