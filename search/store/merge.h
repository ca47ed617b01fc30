#pragma once
// Merging another results database into this one, without duplicates: studies match by name,
// trials by their uid (a copy of the same file worked on elsewhere) or by study name + config
// hash (the same config run elsewhere). Of two matching trials the more finished one is kept
// (complete > diverged > failed, killed, pruned > running > queued; on a tie, this database's). Runs of
// the "runs" study match only by uid: two runs of one config are both kept. A copied trial may
// get another number; the decisions copied with it name the other trials by their new numbers.
#include "search/store/results_db.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace comera::store {

struct MergeCounts {
  int64_t studies_added = 0;
  int64_t trials_added = 0;
  int64_t trials_replaced = 0;        // the destination had the config, less finished
  int64_t trials_skipped = 0;         // already present, as finished or more
  int64_t kernel_choices_copied = 0;  // new, or newer than the destination's
};

// One short write transaction per trial, and one per copied trial for its decisions once every
// trial of its study has its number here, so a concurrent writer is never blocked for long. A
// merge stopped between the two would leave trials without their decisions, which a second run
// skips: call it inside an outer into.write() (as `comera merge` does) to make it all or nothing.
// `progress` (optional) hears (study, trials done, trials in that study) after each trial.
using MergeProgress = std::function<void(const std::string&, int64_t, int64_t)>;
MergeCounts merge_database(ResultsDb& into, ResultsDb& from, const MergeProgress& progress = {});

// Throws, naming both files and how to rename, when merging `sources` in order into `into`
// (null: a file not yet made) would meet a same-named study of other objectives or another
// spec; reads only, so a merge can refuse before it creates or writes anything.
void check_mergeable(ResultsDb* into, const std::vector<ResultsDb*>& sources);

}  // namespace comera::store
