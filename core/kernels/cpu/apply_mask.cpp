#include "core/kernels/cpu/apply_mask.h"

#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>

#include <algorithm>

namespace comera::cpu {

namespace {

// Elements per mask buffer; parallel work comes in 8 chunks at least (as many elements as one
// small parallel region is worth).
constexpr int64_t kChunk = 2048;

}  // namespace

bool maskable(const at::Tensor& t) {
  return t.device().is_cpu() && (t.scalar_type() == at::kFloat || t.scalar_type() == at::kDouble);
}

at::Tensor apply_mask(const DropoutMask& mask, const at::Tensor& f, const at::Tensor& x) {
  const auto fc = f.contiguous();
  const auto xc = x.defined() ? x.contiguous() : x;
  auto out = at::empty(fc.sizes(), fc.options());
  const int64_t n = fc.numel();
  AT_DISPATCH_FLOATING_TYPES(fc.scalar_type(), "comera_dropout", [&] {
    const scalar_t* fp = fc.data_ptr<scalar_t>();
    const scalar_t* xp = xc.defined() ? xc.data_ptr<scalar_t>() : nullptr;
    scalar_t* op = out.data_ptr<scalar_t>();
    at::parallel_for(0, (n + kChunk - 1) / kChunk, 8, [&](int64_t c0, int64_t c1) {
      scalar_t m[kChunk];
      for (int64_t c = c0; c < c1; ++c) {
        const int64_t begin = c * kChunk, count = std::min(kChunk, n - begin);
        mask.multipliers(begin, count, m);
        const scalar_t* fb = fp + begin;
        scalar_t* ob = op + begin;
        if (xp) {
          const scalar_t* xb = xp + begin;
          for (int64_t j = 0; j < count; ++j) ob[j] = xb[j] + m[j] * fb[j];
        } else {
          for (int64_t j = 0; j < count; ++j) ob[j] = m[j] * fb[j];
        }
      }
    });
  });
  return out;
}

}  // namespace comera::cpu
