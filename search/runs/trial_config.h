#pragma once
// The one shape every trial's config is stored in, whichever command made it (a sweep's
// expansion, `comera train`): {"kind", "point", "seed", "experiment"}, plus "step" for a trial
// that times single steps. So one json_extract path ('$.experiment.training.batch_size') reads
// every trial of a database.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace comera {

// What the trial trains, named for tables and fronts: its baseline method (galore, lte,
// lowrank), "dense" (no compressed layer, or method dense), "late" (a late stage) or "early".
std::string trial_kind(const nlohmann::json& experiment);

// kind: trial_kind(experiment) unless given; point: the sweep axes' labels ({} for a run).
nlohmann::json trial_config(const nlohmann::json& experiment, uint64_t seed,
                            const nlohmann::json& point = nlohmann::json::object(), const std::string& kind = "");

}  // namespace comera
