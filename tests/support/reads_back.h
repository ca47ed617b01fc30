#pragma once
// An experiment as recorded (ExperimentConfig::to_json: trial configs, checkpoints) must read
// back as the same experiment.
#include "core/training/experiment.h"
#include "core/util/error.h"

#include <nlohmann/json.hpp>

#include <string>

namespace comera::testing {

// "" when `recorded` parses to an experiment that records as `recorded` again; else why not.
inline std::string reads_back(const nlohmann::json& recorded) {
  try {
    const auto again = parse_experiment(recorded).to_json();
    return again == recorded ? "" : "reads back changed: " + nlohmann::json::diff(recorded, again).dump();
  } catch (const std::exception& e) {
    return error_message(e);
  }
}

}  // namespace comera::testing
