#include "core/training/rank_gauge.h"

#include "core/training/param_groups.h"

#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <cmath>

namespace comera {
namespace {

// Norms of the slices along a core's left bond (dim 0) and right bond (its last dim).
at::Tensor left_norms(const at::Tensor& core) { return core.reshape({core.size(0), -1}).norm(2, {1}); }
at::Tensor right_norms(const at::Tensor& core) {
  return core.reshape({-1, core.size(-1)}).norm(2, {0});
}

}  // namespace

GaugeNorms measure_gauge(const torch::nn::Module& model) {
  GaugeNorms out;
  for (const auto& [name, layer] : tensorized_layers(model)) {
    auto& norms = out[name];
    for (const auto& core : layer->cores())
      norms.push_back(core.detach().norm().item<double>() / std::sqrt(static_cast<double>(core.numel())));
  }
  return out;
}

void hold_gauge(const torch::nn::Module& model, const GaugeNorms& norms) {
  at::NoGradGuard no_grad;
  for (const auto& [name, layer] : tensorized_layers(model)) {
    const auto it = norms.find(name);
    if (it == norms.end()) continue;
    const auto cores = layer->cores();
    const auto ranks = layer->rank_vectors();
    for (size_t k = 1; k < cores.size(); ++k) {
      auto left = cores[k - 1], right = cores[k], d = ranks[k - 1];
      const auto rank = static_cast<double>(d.numel());
      const auto held = [&](size_t core, const at::Tensor& t) {
        return it->second.at(core) * std::sqrt(static_cast<double>(t.numel()) / rank);
      };
      const auto kept = d.abs().ge(layer->threshold());
      const auto one = at::ones_like(d);
      // A slice of norm 0 carries nothing to move; it keeps factor 1.
      auto a = right_norms(left) / held(k - 1, left);
      auto b = left_norms(right) / held(k, right);
      a = at::where(kept & a.gt(0), a, one);
      b = at::where(kept & b.gt(0), b, one);
      std::vector<int64_t> last(static_cast<size_t>(left.dim()), 1), first(static_cast<size_t>(right.dim()), 1);
      last.back() = -1;
      first.front() = -1;
      left.div_(a.reshape(last));
      right.div_(b.reshape(first));
      d.mul_(a * b);
    }
  }
}

}  // namespace comera
