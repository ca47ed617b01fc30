#pragma once
// The "motpe" method: Optuna's multi-objective tree-structured Parzen estimator (Ozaki et al.
// 2020, 2022). The finished trials split into a good group (the best non-dominated ranks, the
// last rank cut by greedy hypervolume subset selection) and the rest (with failed and pending
// trials, as Optuna's constant liar does); a Parzen estimator of each group, l(x) and g(x), is
// a weighted mixture over its trials (truncated Gaussians on numeric axes, a smoothed
// categorical on choices) plus a broad prior; candidates drawn from l, the largest l(x) / g(x) wins.
#include "search/propose/history.h"

#include <cstdint>

namespace comera::propose {

// `history` has at least two finished trials.
Proposal propose_motpe(const Space& space, const std::vector<Observation>& done, const History& history,
                       const std::vector<Values>& pending, uint64_t seed);

}  // namespace comera::propose
