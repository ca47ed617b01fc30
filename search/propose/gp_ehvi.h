#pragma once
// The "gp-ehvi" method: one Gaussian process per objective (on the encoded inputs and the scaled
// objectives), pending points added at their predicted means (kriging believer), and the
// candidate with the largest expected hypervolume improvement over the current front.
#include "search/propose/history.h"
#include "search/propose/proposer.h"

#include <cstdint>

namespace comera::propose {

// `history` has at least two finished trials. `options`: candidates and trained stages (the
// seed is `seed`).
Proposal propose_gp_ehvi(const Space& space, const std::vector<Observation>& done, const History& history,
                         const std::vector<Values>& pending, const ProposerOptions& options, uint64_t seed);

}  // namespace comera::propose
