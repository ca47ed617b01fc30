#pragma once
// What the model-based methods read from the trials so far: which finished and which failed,
// the finished trials' objectives scaled to [0, 1] by their observed range, and which candidates
// to turn down because they repeat a trial or sit on a failed one.
#include "search/propose/proposer.h"

#include <cstddef>
#include <vector>

namespace comera::propose {

// The reference point in the scaled objective box, on every objective: past the worst observed
// value (1), so the ends of the front still own some volume and extending them can gain; 1.1 is
// the usual margin (a tenth of the observed range).
constexpr double kScaledReference = 1.1;

struct History {
  std::vector<size_t> finished, failed;  // indices into the observations
  std::vector<pareto::Point> scaled;     // per finished trial: (y - low) / range
  pareto::Point low, range;              // per objective, over the finished trials
  size_t objectives = 0;
};

// Throws comera::Error when the observations do not all have the same number of objectives.
History read_history(const std::vector<Observation>& done);

// Turns down an encoded candidate that repeats an observed or pending point (after rounding to
// the space) or lies within `failed_radius` (Euclidean, in the encoded cube) of a failed trial.
class Avoidance {
 public:
  Avoidance(const Space& space, const std::vector<Observation>& done, const History& history,
            const std::vector<Values>& pending, double failed_radius = 0.01);
  bool rejects(const std::vector<double>& encoded) const;

 private:
  std::vector<std::vector<double>> taken_, failed_;
  double failed_radius_;
};

}  // namespace comera::propose
