#include "search/runs/trial_config.h"

#include "core/models/model_kind.h"

namespace comera {

std::string trial_kind(const nlohmann::json& experiment) {
  const auto model = experiment.value("model", nlohmann::json::object());
  const std::string method = experiment.value("method", std::string());
  if (method == "galore" || method == "lte" || method == "lowrank") return method;
  if (method == "dense" || !model_kind_of(model).compressed(model)) return "dense";
  return experiment.value("training", nlohmann::json::object()).contains("late_stage") ? "late" : "early";
}

nlohmann::json trial_config(const nlohmann::json& experiment, uint64_t seed, const nlohmann::json& point,
                            const std::string& kind) {
  return {{"kind", kind.empty() ? trial_kind(experiment) : kind},
          {"point", point},
          {"seed", seed},
          {"experiment", experiment}};
}

}  // namespace comera
