#include "core/models/dropout_mask.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>

namespace comera {

namespace {

constexpr uint64_t kGamma = 0x9E3779B97F4A7C15ull, kMix1 = 0xBF58476D1CE4E5B9ull,
                   kMix2 = 0x94D049BB133111EBull;
// Draw b hashes seed ^ (b · kCounter).
constexpr uint64_t kCounter = 0xD1B54A32D192ED03ull;

uint64_t splitmix64(uint64_t z) {
  z += kGamma;
  z = (z ^ (z >> 30)) * kMix1;
  z = (z ^ (z >> 27)) * kMix2;
  return z ^ (z >> 31);
}

// The same bits as an int64 (two's complement), for ATen integer ops.
int64_t bits(uint64_t v) { return static_cast<int64_t>(v); }

// z >> s as on uint64: int64 shifts are arithmetic, so clear the copies of the sign bit.
at::Tensor logical_shift(const at::Tensor& z, int s) {
  return at::bitwise_right_shift(z, s).bitwise_and_(bits(~0ull >> s));
}

// splitmix64 of every element of the int64 tensor z, in place (int64 adds and multiplies wrap
// like uint64 ones).
void splitmix64_(at::Tensor& z) {
  z.add_(bits(kGamma));
  z.bitwise_xor_(logical_shift(z, 30)).mul_(bits(kMix1));
  z.bitwise_xor_(logical_shift(z, 27)).mul_(bits(kMix2));
  z.bitwise_xor_(logical_shift(z, 31));
}

uint64_t draw_seed() {
  auto gen = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(gen.mutex());
  return gen.get<at::CPUGeneratorImpl>()->random64();
}

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
      draws[b] = splitmix64(seed_ ^ (static_cast<uint64_t>(first + b) * kCounter));
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

at::Tensor DropoutMask::multipliers_like(const at::Tensor& t) const {
  const int64_t n = t.numel();
  const auto ints = t.options().dtype(at::kLong);
  auto z = at::arange((n + 3) / 4, ints).mul_(bits(kCounter)).bitwise_xor_(bits(seed_));
  splitmix64_(z);
  // Lane j of draw b is element 4b + j (the little-endian order multipliers() reads).
  const auto lanes = at::arange(0, 64, 16, ints);
  const auto uniforms = at::bitwise_right_shift(z.unsqueeze(1), lanes).bitwise_and_(0xFFFF);
  const auto kept = uniforms.reshape({-1}).narrow(0, 0, n).ge(static_cast<int64_t>(cut_));
  return kept.to(t.scalar_type()).mul_(scale_).view(t.sizes());
}

}  // namespace comera
