#pragma once
// Per-epoch metrics of a trial. Standard names (columns of the epoch_table view): train_loss,
// eval_loss, accuracy, size, surrogate, compression, step_time_ms, tokens_per_s, peak_mem_mb;
// any other name is stored the same way and appears in exports.
#include "search/store/results_db.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace comera::store {

// SQL: how much of an epoch the row `e` of `epochs` covers, its epoch_fraction where it stopped
// inside the epoch, else 1, and 0 for an epoch shared from another trial (computed once, there);
// SUM over rows gives trial-epochs spent.
extern const char* const kEpochCoverage;

// SQL: the seconds of training the trial `t` spent itself: its last elapsed_s (summed over its
// resumes), less the part its shared epochs bring from the trial that computed them.
extern const char* const kTrialSeconds;

struct EpochRecord {
  int64_t epoch = 0;
  int64_t step = 0;                       // optimizer steps so far
  std::string stage;                      // "early", "late", ...
  std::map<std::string, double> metrics;  // NaN and +-inf are kept
  std::string recorded_at;                // set by the database when empty
  // The uid of the trial whose run computed this epoch, when this trial started from its
  // checkpoint (search/runs/shared_early_stage.h); "" = computed by this trial.
  std::string shared_from;
};

// Records (or replaces) one epoch and refreshes the trial's heartbeat, in one short transaction.
void record_epoch(ResultsDb& db, int64_t trial_id, const EpochRecord& record);

// The same without transaction or heartbeat, for callers that hold the write transaction.
void write_epoch(SQLite::Database& db, int64_t trial_id, const EpochRecord& record);
std::vector<EpochRecord> read_epochs(SQLite::Database& db, int64_t trial_id);

// The given metric names in display order: standard ones in the epoch_table view's column order,
// then the others by name.
std::vector<std::string> ordered_metric_names(SQLite::Database& db,
                                              const std::set<std::string>& names);

}  // namespace comera::store
