#include "core/models/dropout.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>

#include <cmath>
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

template <typename T>
void fill_mask(T* out, int64_t n, uint64_t seed, uint32_t cut, T scale) {
  // Blocks of 4 elements share one 64-bit draw; the block index is the counter.
  at::parallel_for(0, (n + 3) / 4, 4096, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      uint64_t r = splitmix64(seed ^ (static_cast<uint64_t>(b) * 0xD1B54A32D192ED03ull));
      const int64_t base = 4 * b, stop = std::min<int64_t>(4, n - base);
      for (int64_t j = 0; j < stop; ++j, r >>= 16)
        out[base + j] = static_cast<uint32_t>(r & 0xFFFF) >= cut ? scale : T(0);
    }
  });
}

}  // namespace

at::Tensor fast_dropout(const at::Tensor& x, double p, bool train) {
  if (!train || p <= 0) return x;
  if (p >= 1 || !x.device().is_cpu() ||
      (x.scalar_type() != at::kFloat && x.scalar_type() != at::kDouble))
    return at::dropout(x, p, train);
  auto mask = at::empty(x.sizes(), x.options().requires_grad(false));
  const auto cut = static_cast<uint32_t>(std::lround(p * 65536.0));
  const double scale = 1.0 / (1.0 - p);
  const uint64_t seed = draw_seed();
  if (x.scalar_type() == at::kFloat)
    fill_mask<float>(mask.data_ptr<float>(), mask.numel(), seed, cut, static_cast<float>(scale));
  else
    fill_mask<double>(mask.data_ptr<double>(), mask.numel(), seed, cut, scale);
  return x * mask;
}

}  // namespace comera
