#pragma once
// The Pareto front of a study's complete trials under chosen objectives, with its hypervolume:
// what `comera pareto` prints and plots. Diverged, failed, pruned and unfinished trials are left
// out (a diverged trial's objectives are those of its last good epoch, not of a result), and so
// are complete trials that recorded no value of an asked objective; neither sets the reference.
#include "search/pareto/front_plot.h"
#include "search/pareto/hypervolume.h"
#include "search/pareto/row_filter.h"
#include "search/store/results_db.h"
#include "search/store/studies.h"

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace comera::pareto {

struct FrontQuery {
  std::string study;
  std::string objectives;          // "eval_loss:min,size:min"; "" = the study's own
  std::vector<Condition> where;
  std::vector<double> reference;   // in the objectives' own units; empty = default_reference
};

// A pruned trial: its number in the study (how reasons and labels name it), its database id
// (what `comera runs show` takes) and why it was pruned.
struct PrunedTrial {
  int64_t number = 0, id = 0;
  std::string why;
};

struct FrontResult {
  std::string study;
  std::vector<store::Objective> objectives;
  // One row per complete trial meeting the conditions: trial (its number in the study), id (in
  // the database, for `runs show` and `plot curves --trials`), kind, state, the point's labels,
  // the objectives asked for, the trial's other recorded objectives, then how it ended and
  // why it was proposed ("proposed": an adaptive sweep's reason, else empty).
  store::FlatTable trials;
  std::vector<std::string> point;  // the columns of the point (the sweep's axes)
  std::vector<Point> values;       // per row, the objectives asked for, as recorded
  std::vector<bool> on_front;      // per row
  Point reference;                 // as recorded (not negated)
  double hypervolume = 0;
  // Other trials meeting the conditions, by state; complete ones that recorded no value of an
  // asked objective as "complete, no loss_target".
  std::map<std::string, size_t> left_out;
  // Pruned trials meeting the conditions (never on the front), by trial number.
  std::vector<PrunedTrial> pruned;
  nlohmann::json published;        // the study spec's published figures
};

FrontResult study_front(store::ResultsDb& db, const FrontQuery& query);

// The front rows only, best first in the first objective.
store::FlatTable front_rows(const FrontResult& result);

// The first two objectives as a plot, front points labelled "#number (id ID)", published figures overlaid
// where they give one of the two objectives.
FrontPlot front_plot(const FrontResult& result);

}  // namespace comera::pareto
