#pragma once
// The optimisers `training.optimizer.kind` names (AdamW, SGD, Adagrad and GaLore built in, more
// registered at run time): each reads its own settings and makes its optimiser over the three
// parameter groups (cores, rank vectors, the rest) at their learning rates (METHOD §3). Every
// one can slice its state when rank truncation cuts a parameter (sliceable_optimizer.h).
#include "core/training/param_groups.h"

#include <nlohmann/json_fwd.hpp>

#include <memory>
#include <string>
#include <vector>

namespace torch::optim {
class Optimizer;
}

namespace comera {

class ConfigReader;
struct OptimizerConfig;

class OptimizerKind {
 public:
  virtual ~OptimizerKind() = default;
  virtual std::string name() const = 0;
  // The kind's own keys of the optimizer section (the learning rates and weight_decay are read
  // already), complete with defaults; keys of other kinds are left for the caller's finish().
  virtual nlohmann::json read(const ConfigReader& optimizer) const = 0;
  // The optimiser over `groups`, group g at learning rate config.rates()[g]. `model` is for
  // kinds that choose parameters by name (GaLore's projected weights).
  virtual std::unique_ptr<torch::optim::Optimizer> make(const torch::nn::Module& model,
                                                        const ParameterGroups& groups,
                                                        const OptimizerConfig& config) const = 0;
};

// Adds a kind (a name already taken is an error).
void register_optimizer_kind(std::shared_ptr<const OptimizerKind> kind);
// Throws comera::Error listing the known kinds.
const OptimizerKind& find_optimizer_kind(const std::string& name);
std::vector<std::string> optimizer_kind_names();

}  // namespace comera
