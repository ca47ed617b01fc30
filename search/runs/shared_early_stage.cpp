#include "search/runs/shared_early_stage.h"

#include "core/training/checkpoint.h"
#include "search/store/canonical_json.h"
#include "search/store/epoch_metrics.h"
#include "search/store/layer_ranks.h"

#include <filesystem>

namespace comera {

namespace {

bool shares(const ExperimentConfig& e) {
  const auto& l = e.training.late;
  return l.enabled && l.start_step == 0 && l.start_epoch > 0 && e.training.nproc == 1;
}

}  // namespace

std::string early_stage_key(const ExperimentConfig& e) {
  if (!shares(e)) return "";
  auto j = e.to_json();
  j.erase("name");
  j.erase("description");
  j["training"] = before_late(j["training"]);
  j["training"].erase("device");
  return store::config_hash(j);
}

std::string early_stage_checkpoint(const std::string& db_path, const store::Trial& trial, const ExperimentConfig& e) {
  const auto key = early_stage_key(e);
  if (key.empty()) return "";
  const auto folder = std::filesystem::absolute(db_path).parent_path() / "checkpoints" / trial.study;
  return (folder / ("early-" + key.substr(0, 16) + ".pt")).string();
}

std::optional<SharedEarlyStage> start_from_shared(store::ResultsDb& db, const store::Trial& trial,
                                                  const ExperimentConfig& e, const std::string& early,
                                                  const std::string& checkpoint) {
  if (early.empty() || std::filesystem::exists(checkpoint) || !std::filesystem::exists(early)) return std::nullopt;
  const int64_t epochs = e.training.late.start_epoch;
  const auto key = early_stage_key(e);
  for (const auto& other : store::list_trials(db, trial.study)) {
    if (other.id == trial.id || !other.config.contains("experiment")) continue;
    if (early_stage_key(parse_experiment(other.config.at("experiment"))) != key) continue;
    std::vector<store::EpochRecord> records;
    for (auto& r : store::read_epochs(db.sql(), other.id))
      if (r.epoch < epochs && !r.metrics.count("partial")) records.push_back(std::move(r));
    if (static_cast<int64_t>(records.size()) != epochs) continue;
    const auto ranks = store::read_layer_ranks(db.sql(), other.id);
    db.write([&] {
      for (auto& r : records) {
        if (r.shared_from.empty()) r.shared_from = other.uid;
        store::write_epoch(db.sql(), trial.id, r);
        if (const auto it = ranks.find(r.epoch); it != ranks.end())
          store::write_layer_ranks(db.sql(), trial.id, r.epoch, it->second);
      }
    });
    copy_checkpoint(early, checkpoint);
    return SharedEarlyStage{other.number, epochs};
  }
  return std::nullopt;
}

}  // namespace comera
