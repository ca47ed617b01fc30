#pragma once
// The optimiser factory (training.optimizer.kind): AdamW (the fused one), SGD or Adagrad over
// three parameter groups (cores, rank vectors, the rest) with their own learning rates
// (METHOD §3), or GaLore (galore.h: AdamW with projected moments for the attention and FFN
// weights). Each can slice its state when rank truncation cuts a parameter.
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
