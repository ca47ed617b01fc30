#pragma once
// An experiment file (experiments/*.json): a name, the model, the training settings and the
// data to train and evaluate on; optionally a baseline "method" (method.h) that rewrites the
// model and optimiser sections before they are read.
#include "core/data/task_data.h"
#include "core/models/model_kind.h"
#include "core/training/train_config.h"

#include <nlohmann/json.hpp>

#include <string>

namespace comera {

struct ExperimentConfig {
  std::string file;  // where it was read from
  std::string name, description;
  ModelSpec model;
  TrainConfig training;
  DataConfig data;
  std::string method;  // "" when the experiment names none
  nlohmann::json method_settings = nlohmann::json::object();

  nlohmann::json to_json() const;
};

// Errors name the file and the key ("experiments/x.json: model.heads: ...").
ExperimentConfig load_experiment(const std::string& file);
ExperimentConfig parse_experiment(const nlohmann::json& json, const std::string& file = "");

}  // namespace comera
