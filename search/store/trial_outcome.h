#pragma once
// How a trial ended, in the words a reader needs beside its numbers: what kind of trial it was,
// the late-stage target it worked toward and how close it came to S0, and the tensorized layers
// it lost (a bond pruned to rank 0 leaves a layer whose output is zero: a model that cannot read
// its input when that layer is the embedding).
#include "search/store/results_db.h"
#include "search/store/trials.h"

#include <cstdint>
#include <string>
#include <vector>

namespace comera::store {

struct TrialOutcome {
  // The sweep's kind ("dense", "early", "late"); for a plain run, from what it recorded: no
  // tensorized entries -> "dense", a late-stage epoch -> "late", else "early". "" before any epoch.
  std::string kind;
  // Late stage only (NaN otherwise): L0, S0 in core entries, S0 as a share of the size the early
  // stage ended at, the final tensorized size over S0 (1 = S0 reached, above = stopped short),
  // and the last epoch's mean training loss minus L0 (the other half of whether a target was met).
  double loss_target, size_target, size_ratio, size_vs_target, loss_vs_target;
  std::vector<std::string> lost_layers;  // layers with a zero rank at the last recorded epoch
  int64_t epochs = 0;                    // epochs recorded

  TrialOutcome();
  // "L0 2.1, S0 0.1" (S0 as a ratio; in entries when no early epoch was recorded), or "".
  std::string target_text() const;
  // "lost embedding.word" or "".
  std::string notes() const;
};

TrialOutcome trial_outcome(ResultsDb& db, const Trial& trial);

}  // namespace comera::store
