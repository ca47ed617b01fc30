#pragma once
// AdamW over three parameter groups (cores, rank vectors, the rest) with their own learning
// rates (METHOD §3), and slicing of its moments when rank truncation cuts a parameter.
#include "core/layers/tensorized.h"
#include "core/training/train_config.h"

#include <memory>
#include <vector>

namespace torch::nn {
class Module;
}
namespace torch::optim {
class AdamW;
}

namespace comera {

// A FusedAdamW; groups in order: cores, rank vectors, other (a group may be empty).
std::unique_ptr<torch::optim::AdamW> make_optimizer(const torch::nn::Module& model,
                                                    const OptimizerConfig& config);

// Sets each group's learning rate to its configured base times `factor` (the schedule).
void set_learning_rates(torch::optim::AdamW& optimizer, const OptimizerConfig& config, double factor);

// For each sliced parameter: exp_avg, exp_avg_sq (and max_exp_avg_sq) <- index_select along
// the same dims, so the kept entries keep their moments.
void slice_optimizer_state(torch::optim::AdamW& optimizer, const std::vector<ParamSlice>& slices);

}  // namespace comera
