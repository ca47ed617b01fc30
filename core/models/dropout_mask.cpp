#include "core/models/dropout_mask.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>

namespace comera {

namespace {

uint64_t splitmix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t draw_seed() {
  auto gen = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(gen.mutex());
  return gen.get<at::CPUGeneratorImpl>()->random64();
}

// Elements per mask buffer; parallel work comes in 8 chunks at least (as many elements as one
// small parallel region is worth).
constexpr int64_t kChunk = 2048;

}  // namespace

DropoutMask::DropoutMask(double p) : DropoutMask(p, draw_seed()) {}

DropoutMask::DropoutMask(double p, uint64_t seed)
    : p_(p),
      seed_(seed), cut_(static_cast<uint32_t>(std::lround(p * 65536.0))), scale_(1.0 / (1.0 - p)) {}

template <typename T>
void DropoutMask::multipliers(int64_t begin, int64_t count, T* out) const {
  // Draws first, then lane j of draw b read as 16-bit number 4b + j (what memcpy gives on a
  // little-endian machine): both loops are short and branch-free, the second vectorises.
  constexpr int64_t kDraws = 256;
  uint64_t draws[kDraws];
  uint16_t uniforms[4 * kDraws];
  const T scale = static_cast<T>(scale_);
  const auto cut = static_cast<int32_t>(cut_);
  while (count > 0) {
    const int64_t first = begin >> 2, lead = begin & 3;
    const int64_t n = std::min(count, 4 * kDraws - lead), blocks = (lead + n + 3) >> 2;
    for (int64_t b = 0; b < blocks; ++b)
      draws[b] = splitmix64(seed_ ^ (static_cast<uint64_t>(first + b) * 0xD1B54A32D192ED03ull));
    std::memcpy(uniforms, draws, static_cast<size_t>(blocks) * sizeof(uint64_t));
    const uint16_t* u = uniforms + lead;
    for (int64_t j = 0; j < n; ++j) out[j] = static_cast<int32_t>(u[j]) >= cut ? scale : T(0);
    begin += n;
    count -= n;
    out += n;
  }
}

template void DropoutMask::multipliers<float>(int64_t, int64_t, float*) const;
template void DropoutMask::multipliers<double>(int64_t, int64_t, double*) const;

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

}  // namespace comera
