#pragma once
// The candidates the tuner measures for one TT layer at one token count: the best plans by the
// cost model (used both ways, and the best forward orders paired with the best backward
// ones), the three named paths, and dense nn::Linear as a reference. "merged" is the layer's
// own merged-path implementation (TTLinear's default), not the executor's copy of that tree.
#include "core/contract/cost_model.h"
#include "core/contract/plan.h"
#include "core/formats/tt_shape.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace comera::tuner {

inline const char* const kMerged = "merged";
inline const char* const kDense = "dense";

struct Candidate {
  std::string name;  // "merged", "core-by-core", "reconstruct", "ranked", "mixed", "dense"
  std::string text;  // the stored choice: "merged", "dense", or the plan's text
  std::shared_ptr<const contract::ContractionPlan> plan;  // null for merged and dense
  contract::Cost cost;  // model cost of one forward + backward
  double score = 0;
  bool reference = false;  // measured for comparison, never chosen
};

struct CandidateOptions {
  int top_k = 4;  // best plans used both ways
  int mixed = 2;  // best plans whose forward and backward orders differ
  contract::CostWeights weights;
};

std::vector<Candidate> make_candidates(const TTShape& shape, int64_t tokens,
                                       const CandidateOptions& options);

// The plan a stored choice names; null for "merged" (the layer's default).
std::shared_ptr<const contract::ContractionPlan> plan_from_choice(const std::string& text, int d);

}  // namespace comera::tuner
