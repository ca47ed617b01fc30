#pragma once
// Gradients all-reduced in flat buckets, as DDP's reducer does it, written out because that
// reducer cannot follow what rank truncation does: it fixes its buckets to the parameters'
// shapes at construction, while truncation cuts cores to new shapes mid-run (identically on
// every rank). Here the buckets are rebuilt whenever the shapes change.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace comera {

class Collective;

class GradientBuckets {
 public:
  // Buckets of at most `bucket_bytes` each (DDP's default is 25 MB), one dtype per bucket.
  explicit GradientBuckets(int64_t bucket_bytes = int64_t{25} << 20) : bucket_bytes_(bucket_bytes) {}

  // Every parameter's gradient becomes the sum over the ranks of weight x its gradient (a rank
  // without a gradient for it counts zero); a parameter no rank has a gradient for keeps none,
  // so the optimiser skips it as it would in one process. Dense CPU gradients only.
  void reduce(const std::vector<at::Tensor>& params, double weight, Collective& collective);

  int64_t rebuilds() const { return rebuilds_; }
  // Elements all-reduced per step (gradients and one presence flag per parameter).
  int64_t elements() const;

 private:
  struct Bucket {
    at::Tensor flat;                 // the gradients, then one flag per parameter
    std::vector<size_t> params;      // indices into the parameter list
    std::vector<int64_t> offsets;    // where each one's gradient starts in `flat`
  };
  void rebuild(const std::vector<at::Tensor>& params);

  int64_t bucket_bytes_;
  std::vector<std::vector<int64_t>> shapes_;  // of the parameters the buckets were built for
  std::vector<at::ScalarType> dtypes_;
  std::vector<Bucket> buckets_;
  int64_t rebuilds_ = 0;
};

}  // namespace comera
