#include "search/runs/shared_early_stage.h"

#include "core/training/checkpoint.h"
#include "search/runs/recorded_run.h"
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

// `trial`'s whole epochs before its late stage, when it recorded them all (and computed them).
std::optional<std::vector<store::EpochRecord>> early_records(store::ResultsDb& db, const store::Trial& trial,
                                                             const ExperimentConfig& e) {
  const int64_t epochs = e.training.late.start_epoch;
  std::vector<store::EpochRecord> records;
  for (auto& r : store::read_epochs(db.sql(), trial.id))
    if (r.epoch < epochs && !r.metrics.count("partial") && r.shared_from.empty()) records.push_back(std::move(r));
  if (static_cast<int64_t>(records.size()) != epochs) return std::nullopt;
  return records;
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
  const std::filesystem::path folder = checkpoint_folder(db_path, trial.study);
  return (folder / ("early-" + key.substr(0, 16) + "-" + trial.uid.substr(0, 12) + ".pt")).string();
}

namespace {

// The early epochs `trial` gives others: when its copy is on disk and it recorded the whole stage.
std::optional<std::vector<store::EpochRecord>> given_stage(store::ResultsDb& db, const store::Trial& trial,
                                                           const ExperimentConfig& e) {
  const auto kept = early_stage_checkpoint(db.path(), trial, e);
  if (kept.empty() || !std::filesystem::exists(kept)) return std::nullopt;
  return early_records(db, trial, e);
}

}  // namespace

bool gives_early_stage(store::ResultsDb& db, const store::Trial& trial, const ExperimentConfig& e) {
  return given_stage(db, trial, e).has_value();
}

std::optional<SharedEarlyStage> start_from_shared(store::ResultsDb& db, const store::Trial& trial,
                                                  const ExperimentConfig& e, const std::string& checkpoint) {
  const auto key = early_stage_key(e);
  if (key.empty() || std::filesystem::exists(checkpoint)) return std::nullopt;
  for (const auto& other : store::list_trials(db, trial.study)) {
    if (other.id == trial.id || !other.config.contains("experiment")) continue;
    const auto oe = parse_experiment(other.config.at("experiment"));
    if (early_stage_key(oe) != key) continue;
    auto records = given_stage(db, other, oe);
    if (!records) continue;
    const auto ranks = store::read_layer_ranks(db.sql(), other.id);
    db.write([&] {
      for (auto& r : *records) {
        r.shared_from = other.uid;
        store::write_epoch(db.sql(), trial.id, r);
        if (const auto it = ranks.find(r.epoch); it != ranks.end())
          store::write_layer_ranks(db.sql(), trial.id, r.epoch, it->second);
      }
    });
    copy_checkpoint(early_stage_checkpoint(db.path(), other, oe), checkpoint);
    return SharedEarlyStage{other.number, static_cast<int64_t>(records->size())};
  }
  return std::nullopt;
}

}  // namespace comera
