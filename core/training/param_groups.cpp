#include "core/training/param_groups.h"

#include <torch/nn/module.h>

#include <unordered_set>

namespace comera {

std::vector<NamedTensorized> tensorized_layers(const torch::nn::Module& model) {
  std::vector<NamedTensorized> out;
  // Tensorized modules never change through this list's users except via their own methods.
  if (auto* t = dynamic_cast<const Tensorized*>(&model)) out.push_back({"", const_cast<Tensorized*>(t)});
  for (const auto& item : model.named_modules("", /*include_self=*/false))
    if (auto* t = dynamic_cast<Tensorized*>(item.value().get())) out.push_back({item.key(), t});
  return out;
}

ParameterGroups group_parameters(const torch::nn::Module& model) {
  ParameterGroups groups;
  std::unordered_set<const void*> seen;
  for (const auto& [name, t] : tensorized_layers(model)) {
    (void)name;
    for (const auto& p : t->cores()) groups.cores.push_back(p), seen.insert(p.unsafeGetTensorImpl());
    for (double s : t->core_init_scales()) groups.core_scales.push_back(s);
    groups.embedding_cores.resize(groups.cores.size(), t->layer_kind() == "ttm_embedding");
    for (const auto& p : t->rank_vectors())
      groups.rank_vectors.push_back(p), seen.insert(p.unsafeGetTensorImpl());
  }
  for (const auto& p : model.parameters())
    if (!seen.count(p.unsafeGetTensorImpl())) groups.other.push_back(p);
  return groups;
}

}  // namespace comera
