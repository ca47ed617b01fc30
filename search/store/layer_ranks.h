#pragma once
// Per-layer ranks of a trial at an epoch, as text "1,12,30,30,30,12,1", with the exact size.
#include "search/store/results_db.h"

#include <map>
#include <string>
#include <vector>

namespace comera::store {

struct LayerRanks {
  std::string layer;  // module path, e.g. "encoder.0.attention.q"
  std::vector<int64_t> ranks;
  int64_t size = 0;  // exact parameter count at these ranks
};

// "1,12,30" <-> {1, 12, 30}: the text form of rank lists in the database and kernel keys.
std::string format_ranks(const std::vector<int64_t>& ranks);
std::vector<int64_t> parse_ranks(const std::string& text);

// Records (or replaces) the ranks of the given layers at one epoch, in one transaction.
void record_layer_ranks(ResultsDb& db, int64_t trial_id, int64_t epoch,
                        const std::vector<LayerRanks>& layers);

// The same without a transaction, for callers that hold the write transaction.
void write_layer_ranks(SQLite::Database& db, int64_t trial_id, int64_t epoch,
                       const std::vector<LayerRanks>& layers);
// By epoch, layers in name order.
std::map<int64_t, std::vector<LayerRanks>> read_layer_ranks(SQLite::Database& db, int64_t trial_id);

}  // namespace comera::store
