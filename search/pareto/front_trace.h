#pragma once
// How a study's front grew with the compute spent: after each trial's end, in the order trials
// ended, the trial-epochs and training minutes spent so far (every ended trial counts what it
// ran: a pruned one its epochs before the pruning) and the hypervolume of the complete trials so
// far. What an auto-tuner is judged by (SEARCH.md: hypervolume against compute, one reference
// point for every method compared).
#include "search/pareto/pareto_set.h"
#include "search/store/results_db.h"
#include "search/store/studies.h"

#include <cstdint>
#include <string>
#include <vector>

namespace comera::pareto {

struct TraceStep {
  int64_t trial = 0;      // its number in the study
  std::string state;      // how it ended
  double epochs = 0;      // trial-epochs so far (an epoch stopped inside counts its fraction)
  double minutes = 0;     // training minutes so far (each trial's last elapsed_s)
  double hypervolume = 0;
};

struct TraceOptions {
  std::vector<store::Objective> objectives;
  std::vector<bool> log;  // per objective: its hypervolume axis in log10 (sizes over decades)
  Point reference;        // in the objectives' own units, worse than every point that should count
};

// Throws comera::Error when the study has no trial or the reference does not fit the objectives.
std::vector<TraceStep> front_trace(store::ResultsDb& db, const std::string& study, const TraceOptions& options);

// The hypervolume a run had reached with `epochs` trial-epochs spent: its last step's at or
// within them, 0 before its first trial ended. Steps in the order front_trace gives them.
double hypervolume_at(const std::vector<TraceStep>& steps, double epochs);

}  // namespace comera::pareto
