#include "search/store/layer_ranks.h"

#include "core/util/comma_list.h"

#include <SQLiteCpp/Column.h>
#include <SQLiteCpp/Statement.h>


namespace comera::store {

std::string format_ranks(const std::vector<int64_t>& ranks) { return join_list(ranks); }

std::vector<int64_t> parse_ranks(const std::string& text) { return int_list(text, "rank list"); }

void write_layer_ranks(SQLite::Database& db, int64_t trial_id, int64_t epoch,
                       const std::vector<LayerRanks>& layers) {
  SQLite::Statement insert(db,
                           "INSERT OR REPLACE INTO layer_ranks (trial_id, epoch, layer, ranks, "
                           "size) VALUES (?, ?, ?, ?, ?)");
  for (const auto& layer : layers) {
    insert.bind(1, trial_id);
    insert.bind(2, epoch);
    insert.bind(3, layer.layer);
    insert.bind(4, format_ranks(layer.ranks));
    insert.bind(5, layer.size);
    insert.exec();
    insert.reset();
  }
}

void record_layer_ranks(ResultsDb& db, int64_t trial_id, int64_t epoch,
                        const std::vector<LayerRanks>& layers) {
  db.write([&] { write_layer_ranks(db.sql(), trial_id, epoch, layers); });
}

std::map<int64_t, std::vector<LayerRanks>> read_layer_ranks(SQLite::Database& db,
                                                            int64_t trial_id) {
  SQLite::Statement select(db,
                           "SELECT epoch, layer, ranks, size FROM layer_ranks WHERE trial_id = ? "
                           "ORDER BY epoch, layer");
  select.bind(1, trial_id);
  std::map<int64_t, std::vector<LayerRanks>> out;
  while (select.executeStep())
    out[select.getColumn(0).getInt64()].push_back({select.getColumn(1).getString(),
                                                   parse_ranks(select.getColumn(2).getString()),
                                                   select.getColumn(3).getInt64()});
  return out;
}

}  // namespace comera::store
