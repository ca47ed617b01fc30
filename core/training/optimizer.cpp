#include "core/training/optimizer.h"

#include "core/training/adagrad.h"
#include "core/training/fused_adamw.h"
#include "core/training/galore.h"
#include "core/training/param_groups.h"
#include "core/training/sgd.h"
#include "core/util/error.h"

namespace comera {

namespace {

std::vector<double> group_rates(const OptimizerConfig& c) {
  return {c.lr_cores, c.lr_ranks, c.lr_other};
}

std::unique_ptr<torch::optim::OptimizerOptions> options_for(const OptimizerConfig& c, double lr) {
  switch (c.kind) {
    case OptimizerKind::AdamW:
    case OptimizerKind::Galore:
      return std::make_unique<torch::optim::AdamWOptions>(
          torch::optim::AdamWOptions(lr).betas({c.beta1, c.beta2}).eps(c.eps)
              .weight_decay(c.weight_decay).amsgrad(c.amsgrad));
    case OptimizerKind::SGD:
      return std::make_unique<torch::optim::SGDOptions>(
          torch::optim::SGDOptions(lr).momentum(c.momentum).dampening(c.dampening)
              .weight_decay(c.weight_decay).nesterov(c.nesterov));
    case OptimizerKind::Adagrad:
      return std::make_unique<torch::optim::AdagradOptions>(
          torch::optim::AdagradOptions(lr).lr_decay(c.lr_decay).weight_decay(c.weight_decay)
              .initial_accumulator_value(c.initial_accumulator).eps(c.eps));
  }
  throw Error("unknown optimiser kind");
}

template <typename Optim, typename Options>
std::unique_ptr<torch::optim::Optimizer> make(std::vector<torch::optim::OptimizerParamGroup> groups,
                                              const OptimizerConfig& c) {
  return std::make_unique<Optim>(std::move(groups),
                                 static_cast<const Options&>(*options_for(c, c.lr_other)));
}

}  // namespace

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const torch::nn::Module& model,
                                                        const OptimizerConfig& config) {
  const auto groups = group_parameters(model);
  const auto rates = group_rates(config);
  std::vector<torch::optim::OptimizerParamGroup> param_groups;
  const std::vector<at::Tensor>* lists[] = {&groups.cores, &groups.rank_vectors, &groups.other};
  for (size_t g = 0; g < 3; ++g) param_groups.emplace_back(*lists[g], options_for(config, rates[g]));
  switch (config.kind) {
    case OptimizerKind::AdamW:
      return make<FusedAdamW, torch::optim::AdamWOptions>(std::move(param_groups), config);
    case OptimizerKind::SGD:
      return make<SGD, torch::optim::SGDOptions>(std::move(param_groups), config);
    case OptimizerKind::Adagrad:
      return make<Adagrad, torch::optim::AdagradOptions>(std::move(param_groups), config);
    case OptimizerKind::Galore:
      return std::make_unique<Galore>(
          std::move(param_groups),
          static_cast<const torch::optim::AdamWOptions&>(*options_for(config, config.lr_other)),
          GaloreSettings{config.galore_rank, config.galore_update_proj_gap, config.galore_scale},
          galore_targets(model));
  }
  throw Error("unknown optimiser kind");
}

void set_learning_rates(torch::optim::Optimizer& optimizer, const OptimizerConfig& config, double factor) {
  const auto rates = group_rates(config);
  auto& groups = optimizer.param_groups();
  for (size_t g = 0; g < groups.size() && g < rates.size(); ++g)
    groups[g].options().set_lr(rates[g] * factor);
}

}  // namespace comera
