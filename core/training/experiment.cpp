#include "core/training/experiment.h"

#include "core/training/method.h"

#include "core/util/config_reader.h"
#include "core/util/error.h"

#include <filesystem>

namespace comera {

nlohmann::json ExperimentConfig::to_json() const {
  nlohmann::json j = {{"name", name}, {"description", description}, {"model", model.to_json()},
                      {"training", training.to_json()}, {"data", data.to_json()}};
  if (!method.empty()) j.update({{"method", method}, {"method_settings", method_settings}});
  return j;
}

namespace {

// |d| >= 0 always: at threshold 0 no entry is ever pruned, whatever shrinks the ranks.
void require_pruning_threshold(const ExperimentConfig& e) {
  const auto& t = e.training;
  const double threshold = e.model.settings.value("rank_threshold", 1.0);
  if (threshold > 0 || (t.early.gamma <= 0 && !t.late.enabled)) return;
  throw Error("model.rank_threshold: 0 prunes nothing (a rank entry is pruned when |d| falls under it), while " +
              std::string(t.late.enabled ? "training.late_stage" : "training.early_stage.gamma") +
              " shrinks the ranks: give a threshold above 0 (the default is 0.01)");
}

}  // namespace

ExperimentConfig parse_experiment(const nlohmann::json& json, const std::string& file) {
  try {
    const auto applied = apply_method(json);
    ConfigReader r(applied, "");
    ExperimentConfig e;
    if (r.has("method")) e.method = r.string("method", "");
    if (r.has("method_settings")) e.method_settings = r.value("method_settings");
    e.file = file;
    e.name = r.string("name", file.empty() ? "experiment" : std::filesystem::path(file).stem().string());
    e.description = r.string("description", "");
    // The training section first: which task the model is for decides what it must have.
    e.training = r.has("training") ? read_train_config(r.object("training")) : TrainConfig{};
    e.model = read_model_spec(r.object("model"), e.training.task);
    // Absent, the data section is read as empty: its format's defaults, as a recorded one holds.
    e.data = read_data_config(r.has("data") ? r.object("data") : ConfigReader(nlohmann::json::object(), "data"));
    r.finish();
    require_pruning_threshold(e);
    return e;
  } catch (const Error& err) {
    throw Error((file.empty() ? std::string() : file + ": ") + err.what());
  }
}

ExperimentConfig load_experiment(const std::string& file) {
  return parse_experiment(read_json_file(file), file);
}

}  // namespace comera
