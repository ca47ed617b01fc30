#pragma once
// The optimiser of a run: the kind training.optimizer.kind names (optimizer_kind.h) over three
// parameter groups (cores, rank vectors, the rest) with their own learning rates (METHOD §3).
#include "core/training/train_config.h"

#include <memory>

namespace torch::nn {
class Module;
}
namespace torch::optim {
class Optimizer;
}

namespace comera {

// Groups in order: cores, rank vectors, other (a group may be empty).
std::unique_ptr<torch::optim::Optimizer> make_optimizer(const torch::nn::Module& model,
                                                        const OptimizerConfig& config);

// Sets each group's learning rate to its configured base times `factor` (the schedule).
void set_learning_rates(torch::optim::Optimizer& optimizer, const OptimizerConfig& config, double factor);

}  // namespace comera
