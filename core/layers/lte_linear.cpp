#include "core/layers/lte_linear.h"

#include "core/util/error.h"

#include <ATen/ATen.h>
#include <torch/nn/init.h>

#include <cmath>
#include <ostream>

namespace comera {

namespace {

// Head h's LoRA term on the h-th chunk of the batch (dim 0), as rows (N, out) in x's order.
at::Tensor per_head(const at::Tensor& x, const at::Tensor& a, const at::Tensor& b) {
  const int64_t heads = a.size(0), in = x.size(-1), out = b.size(1);
  if (x.size(0) % heads == 0)
    return x.reshape({heads, -1, in}).bmm(a.transpose(1, 2)).bmm(b.transpose(1, 2)).reshape({-1, out});
  std::vector<at::Tensor> rows;
  const auto chunks = x.tensor_split(heads, 0);
  for (int64_t h = 0; h < heads; ++h)
    rows.push_back(chunks[h].reshape({-1, in}).matmul(a[h].t()).matmul(b[h].t()));
  return at::cat(rows, 0);
}

}  // namespace

LteLinearImpl::LteLinearImpl(LteLinearOptions options_) : options(options_) { reset(); }

void LteLinearImpl::reset() {
  const auto& o = options;
  if (o.in() < 1 || o.out() < 1 || o.rank() < 1 || o.heads() < 1 || o.merge_steps() < 1)
    throw Error("LteLinear(in=" + std::to_string(o.in()) + ", out=" + std::to_string(o.out()) +
                ", rank=" + std::to_string(o.rank()) + ", heads=" + std::to_string(o.heads()) +
                ", merge_steps=" + std::to_string(o.merge_steps()) + "): all must be >= 1");
  weight = register_parameter("weight", at::empty({o.out(), o.in()}), /*requires_grad=*/false);
  bias = o.bias() ? register_parameter("bias", at::empty({o.out()}), false) : at::Tensor();
  lora_a = register_parameter("lora_a", at::empty({o.heads(), o.rank(), o.in()}));
  lora_b = register_parameter("lora_b", at::empty({o.heads(), o.out(), o.rank()}));
  merged_a = register_buffer("merged_a", at::zeros({o.heads(), o.rank(), o.in()}));
  merged_b = register_buffer("merged_b", at::zeros({o.heads(), o.out(), o.rank()}));
  steps = register_buffer("steps", at::zeros({}, at::kLong));
  reset_parameters();
}

void LteLinearImpl::reset_parameters() {
  at::NoGradGuard no_grad;
  const double in = static_cast<double>(options.in()), out = static_cast<double>(options.out());
  weight.normal_(0, std::sqrt(1.0 / (in + out)));
  if (bias.defined()) bias.uniform_(-1.0 / std::sqrt(out), 1.0 / std::sqrt(out));
  const double a_scale = std::sqrt(in / static_cast<double>(options.rank()));
  for (int64_t h = 0; h < options.heads(); ++h) {
    auto a = lora_a[h];
    torch::nn::init::orthogonal_(a);
    a.mul_(a_scale);
  }
  lora_b.zero_();
  merged_a.zero_();
  merged_b.zero_();
  steps.zero_();
  host_steps_ = -1;  // a checkpoint may load another count
}

at::Tensor LteLinearImpl::forward(const at::Tensor& x) {
  if (x.dim() < 2 || x.size(-1) != options.in())
    throw Error("LteLinear: input has shape " + c10::str(x.sizes()) +
                " but it must be (batch, ..., in = " + std::to_string(options.in()) + ")");
  auto y = bias.defined() ? at::linear(x, weight, bias) : at::linear(x, weight);
  if (!is_training()) return y;
  const auto lora = per_head(x, lora_a, lora_b) - per_head(x, merged_a, merged_b);
  return y + (lora * scaling()).view(y.sizes());
}

void LteLinearImpl::after_step() {
  // The count lives in a buffer (checkpointed) and is read from it once, not every step.
  if (host_steps_ < 0) host_steps_ = steps.item<int64_t>();
  steps.add_(1);
  if (++host_steps_ % options.merge_steps() == 0) merge();
}

void LteLinearImpl::merge() {
  at::NoGradGuard no_grad;
  const auto delta = lora_b.bmm(lora_a) - merged_b.bmm(merged_a);
  weight.add_(delta.mean(0) * scaling());
  merged_a.copy_(lora_a);
  merged_b.copy_(lora_b);
  steps.zero_();
  host_steps_ = 0;
}

void LteLinearImpl::pretty_print(std::ostream& stream) const {
  stream << "comera::LteLinear(in=" << options.in() << ", out=" << options.out()
         << ", rank=" << options.rank() << ", heads=" << options.heads()
         << ", alpha=" << options.alpha() << ", merge_steps=" << options.merge_steps() << ")";
}

void lte_after_step(torch::nn::Module& model) {
  if (auto* lte = dynamic_cast<LteLinearImpl*>(&model)) lte->after_step();
  for (const auto& m : model.modules(/*include_self=*/false))
    if (auto* lte = dynamic_cast<LteLinearImpl*>(m.get())) lte->after_step();
}

}  // namespace comera
