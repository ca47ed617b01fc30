#include "core/layers/low_rank_linear.h"

#include "core/util/error.h"

#include <ATen/ATen.h>

#include <cmath>
#include <ostream>

namespace comera {

LowRankLinearImpl::LowRankLinearImpl(LowRankLinearOptions options_) : options(options_) { reset(); }

void LowRankLinearImpl::reset() {
  const auto& o = options;
  if (o.in() < 1 || o.out() < 1 || o.rank() < 1)
    throw Error("LowRankLinear(in=" + std::to_string(o.in()) + ", out=" + std::to_string(o.out()) +
                ", rank=" + std::to_string(o.rank()) + "): sizes and rank must be >= 1");
  a = register_parameter("a", at::empty({o.out(), o.rank()}));
  b = register_parameter("b", at::empty({o.rank(), o.in()}));
  bias = o.bias() ? register_parameter("bias", at::empty({o.out()})) : at::Tensor();
  reset_parameters();
}

void LowRankLinearImpl::reset_parameters() {
  at::NoGradGuard no_grad;
  // Var(W) = r σ⁴ = 1 / (in + out), the dense and TT layers' initial variance.
  const double in = static_cast<double>(options.in()), out = static_cast<double>(options.out());
  const double sigma = std::pow(1.0 / (static_cast<double>(options.rank()) * (in + out)), 0.25);
  a.normal_(0, sigma);
  b.normal_(0, sigma);
  if (bias.defined()) bias.uniform_(-1.0 / std::sqrt(out), 1.0 / std::sqrt(out));
}

at::Tensor LowRankLinearImpl::forward(const at::Tensor& x) {
  if (x.dim() < 1 || x.size(-1) != options.in())
    throw Error("LowRankLinear: input has shape " + c10::str(x.sizes()) +
                " but the last dimension must be in = " + std::to_string(options.in()));
  auto y = x.matmul(b.t()).matmul(a.t());
  return bias.defined() ? y + bias : y;
}

at::Tensor LowRankLinearImpl::weight() const { return a.matmul(b); }

void LowRankLinearImpl::pretty_print(std::ostream& stream) const {
  stream << "comera::LowRankLinear(in=" << options.in() << ", out=" << options.out()
         << ", rank=" << options.rank() << ", bias=" << (bias.defined() ? "true" : "false") << ")";
}

}  // namespace comera
