#include "search/store/trial_outcome.h"

#include "search/store/epoch_metrics.h"
#include "search/store/layer_ranks.h"
#include "search/store/stored_real.h"

#include <algorithm>
#include <cmath>

namespace comera::store {

namespace {

double metric(const EpochRecord& e, const std::string& name) {
  const auto it = e.metrics.find(name);
  return it == e.metrics.end() ? std::nan("") : it->second;
}

}  // namespace

TrialOutcome::TrialOutcome()
    : loss_target(std::nan("")), size_target(std::nan("")), size_ratio(std::nan("")),
      size_vs_target(std::nan("")), loss_vs_target(std::nan("")) {}

std::string TrialOutcome::target_text() const {
  if (!std::isfinite(loss_target)) return "";
  const std::string l0 = "L0 " + format_real(loss_target);
  if (std::isfinite(size_ratio)) return l0 + ", S0 " + format_real(std::round(size_ratio * 1000) / 1000);
  if (std::isfinite(size_target)) return l0 + ", S0 " + format_real(size_target) + " entries";
  return l0;  // S0 the default ratio, not written in the config
}

std::string TrialOutcome::notes() const {
  std::string text;
  for (const auto& layer : lost_layers) text += (text.empty() ? "lost " : ", ") + layer;
  return text;
}

TrialOutcome trial_outcome(ResultsDb& db, const Trial& trial) {
  TrialOutcome out;
  const auto kind = trial.config.find("kind");
  if (kind != trial.config.end() && kind->is_string()) out.kind = kind->get<std::string>();
  // The targets as configured, until a late epoch records them (queued, or stopped early).
  const auto late = trial.config.value("/experiment/training/late_stage"_json_pointer, nlohmann::json::object());
  if (late.contains("loss_target") && late["loss_target"].is_number()) {
    out.loss_target = late["loss_target"].get<double>();
    if (late.contains("size_target") && late["size_target"].is_number() && late["size_target"].get<double>() > 0)
      out.size_target = late["size_target"].get<double>();
    else if (late.contains("size_ratio") && late["size_ratio"].is_number())
      out.size_ratio = late["size_ratio"].get<double>();
  }
  const auto epochs = read_epochs(db.sql(), trial.id);
  out.epochs = static_cast<int64_t>(epochs.size());
  if (epochs.empty()) return out;
  const auto& last = epochs.back();
  if (out.kind.empty())
    out.kind = metric(last, "tensorized_size") == 0 ? "dense"
               : last.stage == "late"                ? "late"
                                                     : "early";

  if (last.stage == "late") {
    out.size_ratio = std::nan("");
    out.loss_target = metric(last, "loss_target");
    out.size_target = metric(last, "size_target");
    out.size_vs_target = metric(last, "tensorized_size") / out.size_target;
    out.loss_vs_target = metric(last, "train_loss") - out.loss_target;
    // S0 was set from the size the model had when the late stage began: the last early epoch's.
    const auto early = std::find_if(epochs.rbegin(), epochs.rend(),
                                    [](const EpochRecord& e) { return e.stage == "early"; });
    if (early != epochs.rend()) out.size_ratio = out.size_target / metric(*early, "tensorized_size");
  }

  const auto ranks = read_layer_ranks(db.sql(), trial.id);
  if (!ranks.empty())
    for (const auto& layer : ranks.rbegin()->second)
      if (std::find(layer.ranks.begin(), layer.ranks.end(), 0) != layer.ranks.end())
        out.lost_layers.push_back(layer.layer);
  return out;
}

}  // namespace comera::store
