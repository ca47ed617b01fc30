#pragma once
// How a `comera train` run finds its trial: the checkpoint keeps a link to the trial it belongs
// to (a file beside it), so that --resume continues that trial instead of starting another.
#include "search/store/results_db.h"
#include "search/store/trials.h"

#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <string>

namespace comera {

struct TrialLink {
  std::string db;  // absolute path of the database
  int64_t trial = 0;
};

std::optional<TrialLink> read_trial_link(const std::string& checkpoint);
void write_trial_link(const std::string& checkpoint, const TrialLink& link);

// The trial a run of `config` (trial_config.h's shape) records into, held by `worker`: when the
// run resumed its checkpoint and the linked trial of this database has not ended, that trial
// (taken up again if it failed or was killed); else a new trial of the "runs" study, which the
// checkpoint links to from now on. `device` is where the run computes (its environment).
store::Trial link_trial(store::ResultsDb& db, const nlohmann::json& config, const std::string& checkpoint,
                        const std::string& worker, bool resumed, const std::string& device);

}  // namespace comera
