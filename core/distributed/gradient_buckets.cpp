#include "core/distributed/gradient_buckets.h"

#include "core/distributed/collective.h"
#include "core/util/error.h"

#include <ATen/ATen.h>

namespace comera {

void GradientBuckets::rebuild(const std::vector<at::Tensor>& params) {
  shapes_.clear();
  dtypes_.clear();
  buckets_.clear();
  std::vector<Bucket> open;  // the bucket being filled, per dtype (by position in `kinds`)
  std::vector<at::ScalarType> kinds;
  std::vector<int64_t> filled;
  auto close = [&](size_t k) {
    auto& b = open[k];
    if (b.params.empty()) return;
    b.flat = at::zeros({filled[k] + static_cast<int64_t>(b.params.size())}, at::TensorOptions(kinds[k]));
    buckets_.push_back(std::move(b));
    b = Bucket{};
    filled[k] = 0;
  };
  for (size_t i = 0; i < params.size(); ++i) {
    const auto& p = params[i];
    shapes_.push_back(p.sizes().vec());
    dtypes_.push_back(p.scalar_type());
    size_t k = 0;
    while (k < kinds.size() && kinds[k] != p.scalar_type()) ++k;
    if (k == kinds.size()) kinds.push_back(p.scalar_type()), open.emplace_back(), filled.push_back(0);
    if (filled[k] > 0 && (filled[k] + p.numel()) * p.element_size() > bucket_bytes_) close(k);
    open[k].params.push_back(i);
    open[k].offsets.push_back(filled[k]);
    filled[k] += p.numel();
  }
  for (size_t k = 0; k < kinds.size(); ++k) close(k);
  ++rebuilds_;
}

int64_t GradientBuckets::elements() const {
  int64_t n = 0;
  for (const auto& b : buckets_) n += b.flat.numel();
  return n;
}

void GradientBuckets::reduce(const std::vector<at::Tensor>& params, double weight,
                             Collective& collective) {
  bool same = params.size() == shapes_.size();
  for (size_t i = 0; same && i < params.size(); ++i)
    same = params[i].sizes().vec() == shapes_[i] && params[i].scalar_type() == dtypes_[i];
  if (!same) rebuild(params);
  for (auto& b : buckets_) {
    const int64_t flags = b.flat.numel() - static_cast<int64_t>(b.params.size());
    for (size_t j = 0; j < b.params.size(); ++j) {
      const auto& p = params[b.params[j]];
      const auto& g = p.grad();
      auto slot = b.flat.narrow(0, b.offsets[j], p.numel());
      if (!g.defined()) {
        slot.zero_();
        b.flat[flags + static_cast<int64_t>(j)] = 0;
        continue;
      }
      if (g.is_sparse() || !g.device().is_cpu())
        throw Error("data-parallel training all-reduces dense CPU gradients; a parameter of " +
                    std::to_string(p.numel()) + " elements has a " +
                    (g.is_sparse() ? "sparse" : "device") +
                    " gradient (set model.sparse_gradients false, or train on the CPU)");
      slot.copy_(g.reshape({-1}));
    }
    b.flat.narrow(0, 0, flags).mul_(weight);
    for (size_t j = 0; j < b.params.size(); ++j)
      if (params[b.params[j]].grad().defined()) b.flat[flags + static_cast<int64_t>(j)] = 1;
    collective.all_reduce(b.flat);
    const auto present = b.flat.narrow(0, flags, static_cast<int64_t>(b.params.size())).gt(0);
    const auto* has = present.data_ptr<bool>();
    for (size_t j = 0; j < b.params.size(); ++j) {
      if (!has[j]) continue;
      auto p = params[b.params[j]];
      const auto sum = b.flat.narrow(0, b.offsets[j], p.numel()).view(p.sizes());
      if (p.grad().defined())
        p.mutable_grad().copy_(sum);
      else
        p.mutable_grad() = sum.clone();
    }
  }
}

}  // namespace comera
