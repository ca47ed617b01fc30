#include "core/layers/size.h"

#include "core/kernels/fast_kernels.h"
#include "core/layers/dense_stand_in.h"
#include "core/util/error.h"

#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <torch/autograd.h>
#include <torch/nn/module.h>

#include <cmath>

#include <unordered_set>
#include <utility>

namespace comera {

namespace {

// Every tensorized layer of the tree with its module path ("" for the root itself).
std::vector<std::pair<std::string, const Tensorized*>> tensorized_layers(
    const torch::nn::Module& model) {
  std::vector<std::pair<std::string, const Tensorized*>> out;
  if (auto* t = dynamic_cast<const Tensorized*>(&model)) out.emplace_back("", t);
  for (const auto& item : model.named_modules("", /*include_self=*/false))
    if (auto* t = dynamic_cast<const Tensorized*>(item.value().get())) out.emplace_back(item.key(), t);
  return out;
}

int64_t surviving(const at::Tensor& d, double threshold) {
  return (d.abs() >= threshold).sum().item<int64_t>();
}

// What the surrogate needs of each layer besides its rank vectors.
struct SurrogateLayer {
  size_t vectors;                 // rank vectors, K - 1
  double threshold;
  std::vector<double> core_sizes;  // |G_k|, K of them
};

// The surrogate from host memory with its gradient by hand, for contiguous float or double CPU
// rank vectors: the composite ATen form took about eight ops per rank vector, 3 ms of a 60 ms
// batch-1 step of the six-encoder model. Each vector's gradient is
// coefficient·sign(d)·[|d| >= threshold], its coefficient the derivative by its masked l1 norm.
class HostSurrogate : public torch::autograd::Function<HostSurrogate> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, at::TensorList ranks,
                            const std::vector<SurrogateLayer>& layers, SurrogateKind kind) {
    std::vector<double> norms(ranks.size()), thresholds(ranks.size()), coefficients(ranks.size());
    int64_t count = 0;
    size_t first = 0;
    for (const auto& layer : layers) {
      for (size_t k = first; k < first + layer.vectors; ++k) {
        thresholds[k] = layer.threshold;
        AT_DISPATCH_FLOATING_TYPES(ranks[k].scalar_type(), "comera_surrogate_norms", [&] {
          const scalar_t* d = ranks[k].data_ptr<scalar_t>();
          for (int64_t i = 0; i < ranks[k].numel(); ++i)
            if (std::abs(d[i]) >= layer.threshold) norms[k] += std::abs(static_cast<double>(d[i])), ++count;
        });
      }
      first += layer.vectors;
    }
    double value = 0;
    if (kind == SurrogateKind::Mean) {
      for (const double n : norms) value += n;
      const double scale = count > 0 ? 1.0 / static_cast<double>(count) : 1.0;
      value *= scale;
      std::fill(coefficients.begin(), coefficients.end(), scale);
    } else {
      // Per layer sum_k |G_k| p_k p_{k+1} over the norms padded with 1 at both ends.
      first = 0;
      for (const auto& layer : layers) {
        const auto p = [&](size_t k) { return k == 0 || k == layer.vectors + 1 ? 1.0 : norms[first + k - 1]; };
        const auto& z = layer.core_sizes;
        for (size_t k = 0; k < z.size(); ++k) value += z[k] * p(k) * p(k + 1);
        for (size_t k = 1; k <= layer.vectors; ++k)
          coefficients[first + k - 1] = z[k - 1] * p(k - 1) + z[k] * p(k + 1);
        first += layer.vectors;
      }
    }
    ctx->save_for_backward(ranks.vec());
    ctx->saved_data["coefficients"] = coefficients;
    ctx->saved_data["thresholds"] = thresholds;
    return at::scalar_tensor(value, ranks.empty() ? at::TensorOptions(at::kFloat) : ranks[0].options());
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto ranks = ctx->get_saved_variables();
    const auto coefficients = ctx->saved_data["coefficients"].toDoubleVector();
    const auto thresholds = ctx->saved_data["thresholds"].toDoubleVector();
    const double upstream = grads[0].item<double>();
    torch::autograd::variable_list out;
    for (size_t k = 0; k < ranks.size(); ++k) {
      auto g = at::empty_like(ranks[k]);
      AT_DISPATCH_FLOATING_TYPES(ranks[k].scalar_type(), "comera_surrogate_grad", [&] {
        const scalar_t* d = ranks[k].data_ptr<scalar_t>();
        scalar_t* gd = g.data_ptr<scalar_t>();
        const double c = upstream * coefficients[k];
        for (int64_t i = 0; i < g.numel(); ++i)
          gd[i] = std::abs(d[i]) >= thresholds[k] ? static_cast<scalar_t>(d[i] > 0 ? c : d[i] < 0 ? -c : 0) : 0;
      });
      out.push_back(g);
    }
    out.push_back(at::Tensor());  // layers
    out.push_back(at::Tensor());  // kind
    return out;
  }
};

bool host_surrogate(const std::vector<at::Tensor>& ranks) {
  if (!fast_kernels_enabled()) return false;
  for (const auto& d : ranks)
    if (!d.device().is_cpu() || !d.is_contiguous() ||
        (d.scalar_type() != at::kFloat && d.scalar_type() != at::kDouble))
      return false;
  return true;
}

}  // namespace

SurrogateKind parse_surrogate_kind(const std::string& name) {
  if (name == "weighted") return SurrogateKind::Weighted;
  if (name == "mean") return SurrogateKind::Mean;
  throw Error("unknown size surrogate '" + name + "'; use 'weighted' (the paper's l1 size) or "
              "'mean' (mean |d|, as in the authors' code)");
}

std::vector<int64_t> effective_ranks(const Tensorized& layer) {
  std::vector<int64_t> ranks = layer.chain().ranks();
  const auto ds = layer.rank_vectors();
  for (size_t k = 0; k < ds.size(); ++k) ranks[k + 1] = surviving(ds[k], layer.threshold());
  return ranks;
}

int64_t exact_size(const Tensorized& layer) {
  const auto ranks = effective_ranks(layer);
  const auto& chain = layer.chain();
  int64_t total = 0;
  for (int64_t k = 0; k < chain.cores(); ++k) {
    if (ranks[k + 1] == 0) return 0;
    total += ranks[k] * chain.core_size(k) * ranks[k + 1];
  }
  return total;
}

double ModelSize::compression() const {
  return total_params > 0 ? static_cast<double>(dense_model_params) / total_params : 0.0;
}

double ModelSize::megabytes() const { return total_params * 4.0 / 1e6; }

ModelSize model_size(const torch::nn::Module& model) {
  ModelSize size;
  std::unordered_set<const void*> tensorized_params;
  for (const auto& [name, layer] : tensorized_layers(model)) {
    LayerSize l;
    l.name = name;
    l.kind = layer->layer_kind();
    l.ranks = effective_ranks(*layer);
    l.exact = exact_size(*layer);
    for (size_t k = 1; k + 1 < l.ranks.size(); ++k) l.rank_params += l.ranks[k];
    l.dense_equivalent = layer->dense_equivalent();
    for (const auto& p : layer->cores()) tensorized_params.insert(p.unsafeGetTensorImpl());
    for (const auto& p : layer->rank_vectors()) tensorized_params.insert(p.unsafeGetTensorImpl());
    size.tensorized += l.exact;
    size.rank_params += l.rank_params;
    size.dense_model_params += l.dense_equivalent;
    size.layers.push_back(std::move(l));
  }
  // A stand-in's own form counts in the model, the dense layer's weight in its place in dense.
  std::unordered_set<const void*> own_form;
  auto stand_in = [&](const torch::nn::Module& m) {
    const auto* s = dynamic_cast<const DenseStandIn*>(&m);
    if (!s) return;
    for (const auto& p : s->own_form()) own_form.insert(p.unsafeGetTensorImpl());
    size.dense_model_params += s->dense_in_place();
  };
  stand_in(model);
  for (const auto& m : model.modules(/*include_self=*/false)) stand_in(*m);
  std::unordered_set<const void*> seen;
  for (const auto& p : model.parameters(/*recurse=*/true)) {
    const void* impl = p.unsafeGetTensorImpl();
    if (tensorized_params.count(impl) || !seen.insert(impl).second) continue;
    size.dense_params += p.numel();
    if (!own_form.count(impl)) size.dense_model_params += p.numel();
  }
  size.total_params = size.tensorized + size.rank_params + size.dense_params;
  return size;
}

at::Tensor surrogate_size(const torch::nn::Module& model, SurrogateKind kind) {
  const auto layers = tensorized_layers(model);
  std::vector<at::Tensor> ranks;
  std::vector<SurrogateLayer> plan;
  for (const auto& entry : layers) {
    const Tensorized& layer = *entry.second;
    SurrogateLayer l{layer.rank_vectors().size(), layer.threshold(), {}};
    for (int64_t k = 0; k < layer.chain().cores(); ++k)
      l.core_sizes.push_back(static_cast<double>(layer.chain().core_size(k)));
    for (const auto& d : layer.rank_vectors()) ranks.push_back(d);
    plan.push_back(std::move(l));
  }
  if (!layers.empty() && host_surrogate(ranks)) return HostSurrogate::apply(at::TensorList(ranks), plan, kind);

  at::Tensor total;  // undefined while nothing is summed
  auto add = [&total](const at::Tensor& x) { total = total.defined() ? total + x : x; };
  int64_t count = 0;
  for (const auto& entry : layers) {
    const Tensorized& layer = *entry.second;
    const double threshold = layer.threshold();
    std::vector<at::Tensor> norms;  // ||d_k||_1 of the masked d, k = 1..K-1
    for (const auto& d : layer.rank_vectors()) {
      norms.push_back(masked_rank_vector(d, threshold).abs().sum());
      if (kind == SurrogateKind::Mean) count += surviving(d, threshold);
    }
    if (kind == SurrogateKind::Mean) {
      for (const auto& n : norms) add(n);
      continue;
    }
    // sum_k |G_k| ||d_k|| ||d_{k+1}||, the end bonds' norms taken as 1: one product of the
    // padded norm vector with itself shifted (a handful of ops per layer, not a few per core).
    const auto& chain = layer.chain();
    const auto options = layer.cores().front().options();
    std::vector<double> core_sizes;
    for (int64_t k = 0; k < chain.cores(); ++k) core_sizes.push_back(static_cast<double>(chain.core_size(k)));
    const auto one = at::ones({1}, options);
    const auto padded = norms.empty() ? at::ones({2}, options) : at::cat({one, at::stack(norms), one});
    const auto sizes = at::tensor(core_sizes, options.dtype(at::kDouble)).to(options.dtype());
    const auto bonds = padded.numel() - 1;
    add((sizes * padded.narrow(0, 0, bonds) * padded.narrow(0, 1, bonds)).sum());
  }
  if (!total.defined()) return at::zeros({});
  // With nothing surviving, the masked norms (and so total) are already 0.
  if (kind == SurrogateKind::Mean && count > 0) return total / static_cast<double>(count);
  return total;
}

}  // namespace comera
