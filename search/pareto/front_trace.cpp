#include "search/pareto/front_trace.h"

#include "core/util/error.h"
#include "search/pareto/hypervolume.h"
#include "search/store/epoch_metrics.h"
#include "search/store/objectives.h"
#include "search/store/trials.h"

#include <SQLiteCpp/Column.h>
#include <SQLiteCpp/Statement.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace comera::pareto {

namespace {

// An objective value on the hypervolume's axes: minimised, in log10 where asked.
double axis_value(const TraceOptions& o, size_t k, double v) {
  const double x = o.log[k] ? std::log10(v) : v;
  return o.objectives[k].minimize ? x : -x;
}

}  // namespace

std::vector<TraceStep> front_trace(store::ResultsDb& db, const std::string& study, const TraceOptions& o) {
  const size_t dims = o.objectives.size();
  if (o.reference.size() != dims || o.log.size() != dims)
    throw Error("front_trace: give a reference value and a log flag per objective (" + std::to_string(dims) + ")");
  auto trials = store::list_trials(db, study);
  if (trials.empty()) throw Error("study '" + study + "' in " + db.path() + " has no trials");
  trials.erase(std::remove_if(trials.begin(), trials.end(), [](const store::Trial& t) { return t.ended_at.empty(); }),
               trials.end());
  std::stable_sort(trials.begin(), trials.end(),
                   [](const store::Trial& a, const store::Trial& b) { return a.ended_at < b.ended_at; });
  Point reference;
  for (size_t k = 0; k < dims; ++k) reference.push_back(axis_value(o, k, o.reference[k]));
  SQLite::Statement epochs(db.sql(), std::string("SELECT (SELECT COALESCE(SUM(") + store::kEpochCoverage +
                                         "), 0) FROM epochs e WHERE e.trial_id = t.id), " + store::kTrialSeconds +
                                         " FROM trials t WHERE t.id = ?1");
  std::vector<Point> complete;
  std::vector<TraceStep> steps;
  TraceStep at;
  for (const auto& t : trials) {
    epochs.bind(1, t.id);
    epochs.executeStep();
    at.epochs += epochs.getColumn(0).getDouble();
    at.minutes += epochs.getColumn(1).getDouble() / 60;
    epochs.reset();
    if (t.state == store::TrialState::Complete) {
      const auto values = store::read_objectives(db.sql(), t.id);
      Point p;
      for (size_t k = 0; k < dims; ++k) {
        const auto it = values.find(o.objectives[k].name);
        const bool usable = it != values.end() && std::isfinite(it->second) && (!o.log[k] || it->second > 0);
        p.push_back(usable ? axis_value(o, k, it->second) : std::numeric_limits<double>::quiet_NaN());
      }
      complete.push_back(p);
    }
    at.trial = t.number;
    at.state = store::to_string(t.state);
    at.hypervolume = hypervolume(complete, reference);
    steps.push_back(at);
  }
  return steps;
}

double hypervolume_at(const std::vector<TraceStep>& steps, double epochs) {
  double hv = 0;
  for (const auto& s : steps)
    if (s.epochs <= epochs + 1e-9) hv = s.hypervolume;
  return hv;
}

}  // namespace comera::pareto
