#include "core/layers/tt_linear.h"

#include "core/contract/executor.h"
#include "core/contract/merged_path.h"
#include "core/util/error.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <algorithm>
#include <cmath>
#include <ostream>

namespace comera {

TTLinearImpl::TTLinearImpl(TTLinearOptions options_) : options(std::move(options_)) { reset(); }

void TTLinearImpl::reset() {
  shape_ = TTShape(options.in_modes(), options.out_modes(), options.ranks());
  if (!(options.threshold() >= 0))
    throw Error("TTLinear " + shape_.str() + ": threshold " + std::to_string(options.threshold()) +
                " must be >= 0");
  const auto& r = shape_.ranks();
  const int64_t K = shape_.chain().cores();
  cores_.clear();
  rank_vectors_.clear();
  for (int64_t k = 0; k < K; ++k)
    cores_.push_back(register_parameter("core" + std::to_string(k),
                                        at::empty({r[k], shape_.mode(k), r[k + 1]})));
  for (int64_t k = 1; k < K; ++k)
    rank_vectors_.push_back(register_parameter("rank" + std::to_string(k), at::empty({r[k]})));
  if (options.bias())
    bias = register_parameter("bias", at::empty({shape_.out_features()}));
  else
    bias = at::Tensor();
  reset_parameters();
}

void TTLinearImpl::reset_parameters() {
  c10::NoGradGuard no_grad;
  // Var(W) = prod_k σ_k² · prod of interior ranks; with σ_k = s / sqrt(r_k) (r_k the right
  // rank, r_2d = 1) every interior rank cancels, leaving s^(4d) = 1 / (in + out).
  const double in = static_cast<double>(shape_.in_features());
  const double out = static_cast<double>(shape_.out_features());
  const double s = std::pow(1.0 / (in + out), 1.0 / (4.0 * static_cast<double>(shape_.d())));
  const auto& r = shape_.ranks();
  init_scales_.clear();
  for (size_t k = 0; k < cores_.size(); ++k) {
    init_scales_.push_back(s / std::sqrt(static_cast<double>(r[k + 1])));
    cores_[k].normal_(0.0, init_scales_.back());
  }
  for (auto& d : rank_vectors_) d.fill_(1.0);
  if (bias.defined()) {
    const double bound = 1.0 / std::sqrt(out);
    bias.uniform_(-bound, bound);
  }
}

namespace {

void check_input(const TTLinearImpl& layer, const at::Tensor& x) {
  const int64_t in = layer.shape().in_features();
  if (x.dim() < 1 || x.size(-1) != in)
    throw Error("TTLinear " + layer.shape().str() + ": input has shape " + c10::str(x.sizes()) +
                " but the last dimension must be in_features = " + std::to_string(in));
}

// The layer's cores, rank vectors as applied (masked) and bias.
MergedPathLayer operands(const TTLinearImpl& layer) {
  MergedPathLayer op{layer.cores(), {}, layer.bias};
  for (const auto& d : layer.rank_vectors()) op.ranks.push_back(masked_rank_vector(d, layer.threshold()));
  return op;
}

// (rows, out) as x's leading shape and out.
at::Tensor output_view(const at::Tensor& y, const at::Tensor& x) {
  auto shape = x.sizes().vec();
  shape.back() = y.size(1);
  return y.view(shape);
}

}  // namespace

at::Tensor TTLinearImpl::forward(const at::Tensor& x) {
  if (!plan_) return tt_linear_shared_input(x, {this}).front();
  check_input(*this, x);
  const auto op = operands(*this);
  return output_view(
      contract::plan_path(plan_, x.reshape({-1, shape_.in_features()}), op.cores, op.ranks, op.bias), x);
}

std::vector<at::Tensor> tt_linear_shared_input(const at::Tensor& x,
                                               const std::vector<TTLinearImpl*>& layers) {
  for (const auto* l : layers) check_input(*l, x);
  if (std::any_of(layers.begin(), layers.end(), [](const TTLinearImpl* l) { return l->plan() != nullptr; })) {
    std::vector<at::Tensor> out;
    for (auto* l : layers) out.push_back(l->forward(x));
    return out;
  }
  std::vector<MergedPathLayer> ops;
  for (const auto* l : layers) ops.push_back(operands(*l));
  return merged_paths(x, ops);
}

int64_t TTLinearImpl::dense_equivalent() const {
  return shape_.in_features() * shape_.out_features();
}

TruncationResult TTLinearImpl::truncate(bool fold) {
  auto result = truncate_chain(cores_, rank_vectors_, options.threshold(), fold);
  options.ranks(result.ranks_after);
  shape_ = TTShape(options.in_modes(), options.out_modes(), result.ranks_after);
  return result;
}

void TTLinearImpl::pretty_print(std::ostream& stream) const {
  stream << "comera::TTLinear(in=" << shape_.in_features() << ", out=" << shape_.out_features()
         << ", modes=[" << join_dims(shape_.in_modes()) << "|" << join_dims(shape_.out_modes())
         << "], ranks=[" << join_dims(shape_.ranks()) << "], bias=" << (bias.defined() ? "true" : "false")
         << ")";
}

}  // namespace comera
