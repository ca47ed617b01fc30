#include "core/training/epoch_metrics.h"

#include <nlohmann/json.hpp>

namespace comera {

nlohmann::json EpochMetrics::to_json() const {
  nlohmann::json layers = nlohmann::json::array();
  for (const auto& l : size.layers)
    layers.push_back({{"name", l.name}, {"kind", l.kind}, {"ranks", l.ranks}, {"size", l.exact}});
  nlohmann::json out = {{"epoch", epoch}, {"step", step}, {"stage", stage}, {"partial", partial},
          {"train_loss", train_loss}, {"train_accuracy", train_accuracy},
          {"eval_loss", eval_loss}, {"accuracy", accuracy}, {"size", size.total_params},
          {"tensorized_size", size.tensorized}, {"surrogate", surrogate},
          {"compression", size.compression()}, {"size_mb", size.megabytes()},
          {"step_time_ms", step_time_ms}, {"tokens_per_s", tokens_per_s},
          {"peak_mem_mb", peak_mem_mb},
          {"peak_tensor_mb", peak_tensor_mb}, {"elapsed_s", elapsed_s}, {"layers", layers}};
  if (stage == "late") out.update({{"loss_target", loss_target}, {"size_target", size_target}});
  if (ranks > 1) out.update({{"ranks", ranks}, {"all_reduce_ms", all_reduce_ms}, {"all_reduce_mb", all_reduce_mb}});
  for (const auto& [name, value] : eval_metrics) out[name] = value;
  return out;
}

}  // namespace comera
