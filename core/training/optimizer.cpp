#include "core/training/optimizer.h"

#include "core/training/fused_adamw.h"
#include "core/training/param_groups.h"

namespace comera {

namespace {

std::vector<double> group_rates(const OptimizerConfig& c) {
  return {c.lr_cores, c.lr_ranks, c.lr_other};
}

}  // namespace

std::unique_ptr<torch::optim::AdamW> make_optimizer(const torch::nn::Module& model,
                                                    const OptimizerConfig& config) {
  const auto groups = group_parameters(model);
  const auto rates = group_rates(config);
  std::vector<torch::optim::OptimizerParamGroup> param_groups;
  const std::vector<at::Tensor>* lists[] = {&groups.cores, &groups.rank_vectors, &groups.other};
  for (size_t g = 0; g < 3; ++g) {
    auto options = std::make_unique<torch::optim::AdamWOptions>(rates[g]);
    options->betas({config.beta1, config.beta2})
        .eps(config.eps)
        .weight_decay(config.weight_decay)
        .amsgrad(config.amsgrad);
    param_groups.emplace_back(*lists[g], std::move(options));
  }
  return std::make_unique<FusedAdamW>(
      std::move(param_groups), torch::optim::AdamWOptions(config.lr_other)
                                   .betas({config.beta1, config.beta2})
                                   .eps(config.eps)
                                   .weight_decay(config.weight_decay)
                                   .amsgrad(config.amsgrad));
}

void set_learning_rates(torch::optim::AdamW& optimizer, const OptimizerConfig& config, double factor) {
  const auto rates = group_rates(config);
  auto& groups = optimizer.param_groups();
  for (size_t g = 0; g < groups.size() && g < rates.size(); ++g)
    static_cast<torch::optim::AdamWOptions&>(groups[g].options()).lr(rates[g] * factor);
}

void slice_optimizer_state(torch::optim::AdamW& optimizer, const std::vector<ParamSlice>& slices) {
  auto& state = optimizer.state();
  for (const auto& slice : slices) {
    auto it = state.find(c10::guts::to_string(slice.param.unsafeGetTensorImpl()));
    if (it == state.end()) continue;  // never stepped: no moments yet
    auto& s = static_cast<torch::optim::AdamWParamState&>(*it->second);
    auto cut = [&](at::Tensor t) {
      for (const auto& [dim, index] : slice.kept) t = t.index_select(dim, index);
      return t.contiguous();
    };
    s.exp_avg(cut(s.exp_avg()));
    s.exp_avg_sq(cut(s.exp_avg_sq()));
    if (s.max_exp_avg_sq().defined()) s.max_exp_avg_sq(cut(s.max_exp_avg_sq()));
  }
}

}  // namespace comera
