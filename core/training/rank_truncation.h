#pragma once
// Physical rank truncation of a whole model (METHOD §3): every tensorized layer cuts its pruned
// slices, and the optimiser's moments are cut the same way. Also rebuilds truncated shapes on a
// freshly built model, so a checkpoint taken after truncation loads into it.
#include "core/layers/tensorized.h"

#include <map>
#include <string>
#include <vector>

namespace torch::nn {
class Module;
}
namespace torch::optim {
class Optimizer;
}

namespace comera {

struct LayerTruncation {
  std::string name;
  TruncationResult result;
};

// optimizer may be null (no state to cut). Returns only the layers whose ranks changed.
std::vector<LayerTruncation> truncate_model(torch::nn::Module& model, torch::optim::Optimizer* optimizer,
                                            bool fold);

// Allocated ranks of every tensorized layer, by module name.
std::map<std::string, std::vector<int64_t>> allocated_ranks(torch::nn::Module& model);

// Where ranks to restore come from, for errors: "checkpoint X", and the fix for a mismatch.
struct RanksSource {
  std::string what = "checkpoint";
  std::string fix = "resume with the config the checkpoint was made with";
};

// Shrinks each named layer to the given ranks (keeping the leading slices of every bond; the
// values are then overwritten by loading the checkpoint). Errors name the layer on mismatch.
// every_layer: the map must cover every tensorized layer of the model; else layers missing
// from it keep their ranks and names the model lacks are ignored.
void restore_ranks(torch::nn::Module& model, const std::map<std::string, std::vector<int64_t>>& ranks,
                   bool every_layer = true, const RanksSource& source = {});

}  // namespace comera
