#pragma once
// The next point of an adaptive multi-objective sweep, from the trials so far: a random initial
// design, then a model of the objectives proposes where the Pareto front is likely to gain most.
// Stateless and deterministic: the same space, history, pending points and options give the same
// proposal, so a sweep is reproducible from its seed and its recorded trials, and any worker can
// ask.
#include "search/pareto/pareto_set.h"
#include "search/propose/space.h"

#include <cstdint>
#include <string>
#include <vector>

namespace comera::propose {

struct Observation {
  Values x;
  // Every objective minimised, already transformed by the caller (a log size, a negated
  // accuracy); a NaN entry marks a failed trial, whose neighbourhood is then avoided.
  pareto::Point y;
  std::string name = "";  // how reasons name it ("trial 7"); "": "front point" and its index
};

struct Proposal {
  Values x;
  double expected_gain = 0;      // expected hypervolume improvement in the normalised objective box (gp-ehvi)
  pareto::Point predicted;       // the model's mean of each objective (gp-ehvi; empty otherwise)
  std::string method;            // "random" (initial design or fallback), "gp-ehvi", "motpe"
  std::string reason;            // one line: what the point is for
  std::vector<size_t> between;   // observations (indices) on the front whose gap it aims at
};

// A trial's early stage that is trained and kept (a sweep's shared early stage): a trial that
// keeps its point on every axis but the late-stage ones starts from it and runs `cost` of a
// trial (its late stage's share of the epochs).
struct TrainedStage {
  Values x;
  std::string name;  // "trial 3"
  double cost = 1;
};

struct ProposerOptions {
  std::string method = "gp-ehvi";  // "random", "gp-ehvi", "motpe"
  uint64_t seed = 0;
  int64_t initial = 0;             // Latin hypercube points before a model is used; 0: default_initial
  int64_t budget = 0;              // the proposals the study may make in all, where known (0: not known)
  int64_t candidates = 2000;       // gp-ehvi: acquisition candidates per proposal
  // gp-ehvi: with trained stages, candidates are also drawn on them (late axes re-drawn), and
  // every candidate is ranked by its expected gain per cost. `late_axes`: per axis, whether it
  // sets the late stage only.
  std::vector<TrainedStage> trained;
  std::vector<bool> late_axes;
};

// The default initial design: max(5, 2 x axes) points, but no more than half of a known budget
// (and at least axes + 1), so a small budget still leaves the model proposals to make.
int64_t default_initial(size_t axes, int64_t budget);

// The methods `options.method` may name.
std::vector<std::string> proposer_methods();

// `pending`: points proposed but not yet observed (other workers' running trials); the
// proposal avoids them, so workers asking in turn get distinct points. Throws comera::Error on an
// invalid space or options, or an observation or pending point that does not fit the space.
Proposal propose(const Space& space, const std::vector<Observation>& done, const std::vector<Values>& pending,
                 const ProposerOptions& options);

}  // namespace comera::propose
