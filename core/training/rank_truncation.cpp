#include "core/training/rank_truncation.h"

#include "core/training/sliceable_optimizer.h"
#include "core/training/param_groups.h"
#include "core/util/error.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

namespace comera {

std::vector<LayerTruncation> truncate_model(torch::nn::Module& model, torch::optim::Optimizer* optimizer,
                                            bool fold) {
  std::vector<LayerTruncation> changed;
  for (const auto& [name, layer] : tensorized_layers(model)) {
    auto result = layer->truncate(fold);
    if (optimizer) slice_optimizer_state(*optimizer, result.slices);
    if (result.changed()) changed.push_back({name, std::move(result)});
  }
  return changed;
}

std::map<std::string, std::vector<int64_t>> allocated_ranks(torch::nn::Module& model) {
  std::map<std::string, std::vector<int64_t>> ranks;
  for (const auto& [name, layer] : tensorized_layers(model)) ranks[name] = layer->chain().ranks();
  return ranks;
}

void restore_ranks(torch::nn::Module& model, const std::map<std::string, std::vector<int64_t>>& ranks,
                   bool every_layer, const RanksSource& source) {
  const auto layers = tensorized_layers(model);
  if (every_layer && layers.size() != ranks.size())
    throw Error(source.what + " has ranks for " + std::to_string(ranks.size()) + " tensorized layers but the model has " +
                std::to_string(layers.size()) + " (" + source.fix + ")");
  c10::NoGradGuard no_grad;
  for (const auto& [name, layer] : layers) {
    auto it = ranks.find(name);
    if (!every_layer && it == ranks.end()) continue;
    const auto& now = layer->chain().ranks();
    if (it == ranks.end() || it->second.size() != now.size())
      throw Error(source.what + " has no matching ranks for layer " + name + " (" + source.fix + ")");
    if (it->second == now) continue;
    // Mark every slice beyond the target rank as pruned, then cut: the layer takes the shape.
    auto d = layer->rank_vectors();
    for (size_t k = 0; k < d.size(); ++k) {
      const int64_t target = it->second[k + 1];
      if (target > d[k].size(0) || target < 0)
        throw Error(source.what + " rank " + std::to_string(target) + " of layer " + name +
                    " is not within the configured rank " + std::to_string(d[k].size(0)) + " (" + source.fix + ")");
      d[k].fill_(1.0);
      d[k].narrow(0, target, d[k].size(0) - target).zero_();
    }
    layer->truncate(false);
  }
}

}  // namespace comera
