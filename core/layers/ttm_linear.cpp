#include "core/layers/ttm_linear.h"

#include "core/layers/ttm_lookup.h"
#include "core/util/error.h"
#include "core/util/precision.h"

#include <ATen/ATen.h>

#include <cmath>
#include <functional>
#include <numeric>
#include <ostream>

namespace comera {

namespace {

int64_t product(const std::vector<int64_t>& v) {
  return std::accumulate(v.begin(), v.end(), int64_t{1}, std::multiplies<>());
}

}  // namespace

TTMLinearImpl::TTMLinearImpl(TTMLinearOptions options_) : options(std::move(options_)) { reset(); }

void TTMLinearImpl::reset() {
  shape_ = TTMShape(product(options.in_modes()), options.in_modes(), options.out_modes(), options.ranks());
  if (!(options.threshold() >= 0))
    throw Error("TTMLinear " + shape_.str() + ": threshold " + std::to_string(options.threshold()) +
                " must be >= 0");
  register_ttm_chain(*this, shape_, cores_, rank_vectors_);
  bias = options.bias() ? register_parameter("bias", at::empty({out_features()})) : at::Tensor();
  reset_parameters();
}

void TTMLinearImpl::reset_parameters() {
  at::NoGradGuard no_grad;
  // An entry of W sums prod_{k<d} r_k products of d core entries; with sigma_k = s / sqrt(r_k)
  // (right rank) the ranks cancel and s^(2d) = 1 / (in + out), TTLinear's weight variance.
  const double in = static_cast<double>(in_features());
  const double out = static_cast<double>(out_features());
  const double s = std::pow(1.0 / (in + out), 1.0 / (2.0 * static_cast<double>(shape_.d())));
  const auto& r = shape_.ranks();
  init_scales_.clear();
  for (size_t k = 0; k < cores_.size(); ++k) {
    init_scales_.push_back(s / std::sqrt(static_cast<double>(r[k + 1])));
    cores_[k].normal_(0, init_scales_.back());
  }
  for (auto& d : rank_vectors_) d.fill_(1);
  if (bias.defined()) {
    const double bound = 1.0 / std::sqrt(out);
    bias.uniform_(-bound, bound);
  }
}

at::Tensor TTMLinearImpl::weight() const {
  // Left to right, t (rows so far, columns so far, r) times core k, its new row mode placed
  // after the old rows and its column mode after the old columns: one GEMM and one copy a core,
  // no row gathers (the lookup path's), since every row of W is wanted.
  const auto cores = scaled_cores(cores_, rank_vectors_, options.threshold());
  at::Tensor t = cores[0].squeeze(0);  // (n_1, m_1, r_1)
  for (size_t k = 1; k < cores.size(); ++k) {
    const auto& c = cores[k];  // (r, n, m, r')
    const int64_t a = t.size(0), b = t.size(1), n = c.size(1), m = c.size(2), r = c.size(3);
    t = at::mm(t.reshape({a * b, c.size(0)}), c.reshape({c.size(0), -1}))
            .view({a, b, n, m, r})
            .permute({0, 2, 1, 3, 4})
            .reshape({a * n, b * m, r});
  }
  return t.squeeze(-1);
}

int64_t TTMLinearImpl::weight_macs() const {
  const auto& r = shape_.ranks();
  const auto& sizes = shape_.chain().core_sizes();
  int64_t macs = 0, done = sizes[0];
  for (size_t k = 1; k < sizes.size(); ++k) {
    macs += done * r[k] * sizes[k] * r[k + 1];
    done *= sizes[k];
  }
  return macs;
}

at::Tensor TTMLinearImpl::forward(const at::Tensor& x) {
  if (x.dim() < 1 || x.size(-1) != in_features())
    throw Error("TTMLinear " + shape_.str() + ": input has shape " + c10::str(x.sizes()) +
                " but the last dimension must be in_features = " + std::to_string(in_features()));
  const auto w = weight();
  const auto rows = compute_cast(x).reshape({-1, in_features()});
  auto y = bias.defined() ? at::addmm(compute_cast(bias), rows, w) : at::mm(rows, w);
  auto sizes = x.sizes().vec();
  sizes.back() = out_features();
  return y.view(sizes);
}

TruncationResult TTMLinearImpl::truncate(bool fold) {
  auto result = truncate_chain(cores_, rank_vectors_, options.threshold(), fold);
  options.ranks(result.ranks_after);
  shape_ = TTMShape(in_features(), options.in_modes(), options.out_modes(), result.ranks_after);
  return result;
}

void TTMLinearImpl::pretty_print(std::ostream& stream) const {
  stream << "comera::TTMLinear(in=" << in_features() << ", out=" << out_features() << ", modes=["
         << join_dims(options.in_modes()) << "]x[" << join_dims(options.out_modes()) << "], ranks=["
         << join_dims(shape_.ranks()) << "], bias=" << (bias.defined() ? "true" : "false") << ")";
}

}  // namespace comera
