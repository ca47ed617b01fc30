#include "core/training/sgd.h"

#include "core/training/optimizer_groups.h"
#include "core/training/optimizer_kind.h"
#include "core/training/train_config.h"
#include "core/util/config_reader.h"
#include "core/util/error.h"

namespace comera {

void SGD::slice_state(const std::vector<ParamSlice>& slices) {
  for (const auto& slice : slices) {
    auto it = state_.find(state_key(slice.param));
    if (it == state_.end()) continue;  // no momentum yet
    auto& s = static_cast<torch::optim::SGDParamState&>(*it->second);
    if (s.momentum_buffer().defined()) s.momentum_buffer(sliced(s.momentum_buffer(), slice));
  }
}

namespace {

class SGDKind : public OptimizerKind {
 public:
  std::string name() const override { return "sgd"; }
  nlohmann::json read(const ConfigReader& o) const override {
    const double momentum = o.number("momentum", 0), dampening = o.number("dampening", 0);
    const bool nesterov = o.boolean("nesterov", false);
    if (nesterov && (momentum <= 0 || dampening != 0))
      throw Error(o.key_path("nesterov") + ": Nesterov momentum needs momentum > 0 and dampening 0");
    return {{"momentum", momentum}, {"dampening", dampening}, {"nesterov", nesterov}};
  }
  std::unique_ptr<torch::optim::Optimizer> make(const torch::nn::Module&, const ParameterGroups& groups,
                                                const OptimizerConfig& config) const override {
    const auto s = config.complete_settings();
    const auto options = torch::optim::SGDOptions(config.lr_other)
                             .momentum(s.at("momentum"))
                             .dampening(s.at("dampening"))
                             .weight_decay(config.weight_decay)
                             .nesterov(s.at("nesterov"));
    return std::make_unique<SGD>(torch_groups(groups, config.rates(), options), options);
  }
};

}  // namespace

std::shared_ptr<const OptimizerKind> sgd_kind() { return std::make_shared<SGDKind>(); }

}  // namespace comera
