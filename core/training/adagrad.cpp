#include "core/training/adagrad.h"

#include "core/training/optimizer_groups.h"
#include "core/training/optimizer_kind.h"
#include "core/training/train_config.h"
#include "core/util/config_reader.h"

namespace comera {

void Adagrad::slice_state(const std::vector<ParamSlice>& slices) {
  for (const auto& slice : slices) {
    auto it = state_.find(state_key(slice.param));
    if (it == state_.end()) continue;
    auto& s = static_cast<torch::optim::AdagradParamState&>(*it->second);
    s.sum(sliced(s.sum(), slice));
  }
}

namespace {

class AdagradKind : public OptimizerKind {
 public:
  std::string name() const override { return "adagrad"; }
  nlohmann::json read(const ConfigReader& o) const override {
    return {{"eps", o.number("eps", 1e-10)}, {"lr_decay", o.number("lr_decay", 0)},
            {"initial_accumulator", o.number("initial_accumulator", 0)}};
  }
  std::unique_ptr<torch::optim::Optimizer> make(const torch::nn::Module&, const ParameterGroups& groups,
                                                const OptimizerConfig& config) const override {
    const auto s = config.complete_settings();
    const auto options = torch::optim::AdagradOptions(config.lr_other)
                             .lr_decay(s.at("lr_decay"))
                             .weight_decay(config.weight_decay)
                             .initial_accumulator_value(s.at("initial_accumulator"))
                             .eps(s.at("eps"));
    return std::make_unique<Adagrad>(torch_groups(groups, config.rates(), options), options);
  }
};

}  // namespace

std::shared_ptr<const OptimizerKind> adagrad_kind() { return std::make_shared<AdagradKind>(); }

}  // namespace comera
