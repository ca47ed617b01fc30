#pragma once
// What `comera runs list --json` and `comera runs show --json` print for a trial, built in one
// place so that the HTML report embeds exactly the same documents.
#include "search/store/epoch_metrics.h"
#include "search/store/flat_table.h"
#include "search/store/objectives.h"
#include "search/store/trials.h"

#include <nlohmann/json.hpp>

#include <vector>

namespace comera::store {

// {name: value}, non-finite values as "nan", "inf", "-inf".
nlohmann::json objectives_json(const ObjectiveValues& values);

// Seconds since a running trial's last heartbeat, by SQLite's clock (which writes them); NaN
// for a trial that is not running or has none yet.
double heartbeat_age_s(ResultsDb& db, const Trial& trial);

// A trial's row of `runs list --json`: its kind, late-stage target, size/S0, lost layers,
// state, seed, epochs, objectives, where it ran and (running) its heartbeat's age.
nlohmann::json trial_row_json(ResultsDb& db, const Trial& trial);

// The epochs as a table: epoch, step, stage, then every metric recorded in display order.
FlatTable epoch_table(ResultsDb& db, const std::vector<EpochRecord>& epochs);

// `runs show --json`: the trial's fields (store::to_json), its objectives, its epochs (rows of
// epoch_table) and its layer ranks by epoch.
nlohmann::json trial_detail_json(ResultsDb& db, const Trial& trial);

}  // namespace comera::store
