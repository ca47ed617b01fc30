#pragma once
// Flat exports for pandas, spreadsheets and plotting: one row per trial or per trial epoch, the
// config flattened into "config.<dotted key>" columns.
#include "search/store/flat_table.h"
#include "search/store/results_db.h"

#include <string>

namespace comera::store {

enum class ExportGrain { Trial, Epoch };

// Trial rows carry state, environment and "objective.<name>" columns; epoch rows carry step,
// stage and every metric (standard ones first). `study` empty: all studies.
FlatTable export_table(ResultsDb& db, ExportGrain grain, const std::string& study = "");

}  // namespace comera::store
