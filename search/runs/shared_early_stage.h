#pragma once
// An early stage trained once per study. Trials that differ only in late-stage settings (L0,
// S0, the late stage's control) train identical early stages: each that trains one keeps a copy
// of its checkpoint (TrainerOptions::early_stage_copy) under its own uid, and the later ones
// start from one of them, the early epochs of that same trial copied into their records marked
// shared (store::EpochRecord::shared_from), which count as no compute. A copy serves only the
// database that records its trial: another database's, in the same folder under the same study
// name, has another uid. A resumed run ends exactly where the uninterrupted one does
// (test_trainer), so such a trial ends where it would have alone.
#include "core/training/experiment.h"
#include "search/store/results_db.h"
#include "search/store/trials.h"

#include <optional>
#include <string>

namespace comera {

// What training as `e` up to its late stage depends on, hashed (not where it computes, nor
// names): trials with equal keys share that stage. "" when `e` has no late stage starting at an
// epoch, or trains in several processes.
std::string early_stage_key(const ExperimentConfig& e);

// Where `trial` (experiment `e`) keeps the checkpoint of its early stage, beside its own
// checkpoint; "" when `e` has no late stage starting at an epoch, or trains in several processes.
std::string early_stage_checkpoint(const std::string& db_path, const store::Trial& trial, const ExperimentConfig& e);

// Whether `trial` (experiment `e`) can give its early stage to others: its copy is on disk and
// `db` holds every epoch of that stage, whole.
bool gives_early_stage(store::ResultsDb& db, const store::Trial& trial, const ExperimentConfig& e);

struct SharedEarlyStage {
  int64_t from_trial = 0;  // the number of the trial whose records and checkpoint were copied
  int64_t epochs = 0;      // how many epochs
};

// Before `trial` (experiment `e`) trains: when its own checkpoint is not there yet and another
// trial of the study with the same key gives its early stage (the lowest numbered), copies that
// trial's early epochs (with their layer ranks) into `trial` and then its copy to `checkpoint`,
// in that order, so a kill between the two copies again. nullopt: it trains its own.
std::optional<SharedEarlyStage> start_from_shared(store::ResultsDb& db, const store::Trial& trial,
                                                  const ExperimentConfig& e, const std::string& checkpoint);

}  // namespace comera
