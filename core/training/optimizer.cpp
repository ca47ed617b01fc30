#include "core/training/optimizer.h"

#include "core/training/adagrad.h"
#include "core/training/fused_adamw.h"
#include "core/training/galore.h"
#include "core/training/optimizer_kind.h"
#include "core/training/param_groups.h"
#include "core/training/sgd.h"
#include "core/util/registry.h"

namespace comera {

namespace {

// Built-in kinds are listed here rather than registered by static objects, which the linker
// drops from a static library when nothing else refers to their file.
Registry<OptimizerKind>& registry() {
  static Registry<OptimizerKind> r("optimiser kind", {adamw_kind(), sgd_kind(), adagrad_kind(), galore_kind()});
  return r;
}

}  // namespace

void register_optimizer_kind(std::shared_ptr<const OptimizerKind> kind) { registry().add(std::move(kind)); }

const OptimizerKind& find_optimizer_kind(const std::string& name) { return registry().find(name); }

std::vector<std::string> optimizer_kind_names() { return registry().names(); }

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const torch::nn::Module& model,
                                                        const OptimizerConfig& config) {
  return find_optimizer_kind(config.kind).make(model, group_parameters(model), config);
}

void set_learning_rates(torch::optim::Optimizer& optimizer, const OptimizerConfig& config, double factor) {
  const auto rates = config.rates();
  auto& groups = optimizer.param_groups();
  for (size_t g = 0; g < groups.size() && g < rates.size(); ++g)
    groups[g].options().set_lr(rates[g] * factor);
}

}  // namespace comera
