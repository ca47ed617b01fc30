#include "core/kernels/dropout_mask.h"

#include "core/kernels/cpu/avx512_intrinsics.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>
#include <type_traits>

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

// draws[b] = splitmix64(seed ^ ((first + b) · kCounter)) for b < blocks.
void draw_scalar(uint64_t seed, uint64_t first, int64_t blocks, uint64_t* draws) {
  for (int64_t b = 0; b < blocks; ++b)
    draws[b] = splitmix64(seed ^ (static_cast<uint64_t>(first + b) * kCounter));
}

// out[j] = u[j] >= cut ? scale : 0.
template <typename T>
void keep_scalar(const uint16_t* u, int64_t n, int32_t cut, T scale, T* out) {
  for (int64_t j = 0; j < n; ++j) out[j] = static_cast<int32_t>(u[j]) >= cut ? scale : T(0);
}

#ifdef COMERA_X86_KERNELS
// The same hashes eight lanes at a time (64-bit multiplies need AVX-512DQ): the scalar hash
// was most of the mask's cost, and the masks most of dropout's.
__attribute__((target("avx512f"))) inline __m512i all(uint64_t v) {
  return _mm512_set1_epi64(static_cast<long long>(v));
}

__attribute__((target("avx512f,avx512dq"))) void draw_avx512(uint64_t seed, uint64_t first,
                                                              int64_t blocks, uint64_t* draws) {
  __m512i index = _mm512_add_epi64(all(first), _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0));
  int64_t b = 0;
  for (; b + 8 <= blocks; b += 8) {
    __m512i z = _mm512_xor_si512(all(seed), _mm512_mullo_epi64(index, all(kCounter)));
    z = _mm512_add_epi64(z, all(kGamma));
    z = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_srli_epi64(z, 30)), all(kMix1));
    z = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_srli_epi64(z, 27)), all(kMix2));
    _mm512_storeu_si512(draws + b, _mm512_xor_si512(z, _mm512_srli_epi64(z, 31)));
    index = _mm512_add_epi64(index, all(8));
  }
  draw_scalar(seed, first + static_cast<uint64_t>(b), blocks - b, draws + b);
}

// keep_scalar for float, sixteen at a time (cut < 65536: unsigned 16-bit compares).
__attribute__((target("avx512f,avx512bw,avx512vl"))) void keep_avx512(const uint16_t* u, int64_t n,
                                                                       int32_t cut, float scale,
                                                                       float* out) {
  const __m256i c = _mm256_set1_epi16(static_cast<short>(cut));
  const __m512 s = _mm512_set1_ps(scale);
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    const __mmask16 keep = _mm256_cmpge_epu16_mask(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(u + j)), c);
    _mm512_storeu_ps(out + j, _mm512_maskz_mov_ps(keep, s));
  }
  keep_scalar(u + j, n - j, cut, scale, out + j);
}

bool has_avx512_hash() {
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
                          __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
  return has;
}
#endif

void draw(uint64_t seed, uint64_t first, int64_t blocks, uint64_t* draws) {
#ifdef COMERA_X86_KERNELS
  if (has_avx512_hash()) return draw_avx512(seed, first, blocks, draws);
#endif
  draw_scalar(seed, first, blocks, draws);
}

template <typename T>
void keep(const uint16_t* u, int64_t n, int32_t cut, T scale, T* out) {
#ifdef COMERA_X86_KERNELS
  if constexpr (std::is_same_v<T, float>)
    if (has_avx512_hash() && cut < 65536) return keep_avx512(u, n, cut, scale, out);
#endif
  keep_scalar(u, n, cut, scale, out);
}

thread_local at::Generator t_seeds;  // undefined: the global generator

uint64_t draw_seed() {
  auto gen = t_seeds.defined() ? t_seeds : at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(gen.mutex());
  return gen.get<at::CPUGeneratorImpl>()->random64();
}

}  // namespace

DropoutMask::DropoutMask(double p) : DropoutMask(p, draw_seed()) {}

DropoutSeeds::DropoutSeeds(at::Generator generator) : previous_(std::move(t_seeds)) { t_seeds = std::move(generator); }

DropoutSeeds::~DropoutSeeds() { t_seeds = std::move(previous_); }

DropoutMask::DropoutMask(double p, uint64_t seed)
    : p_(p),
      seed_(seed), cut_(static_cast<uint32_t>(std::lround(p * 65536.0))), scale_(1.0 / (1.0 - p)) {}

template <typename T>
void DropoutMask::multipliers(int64_t begin, int64_t count, T* out) const {
  // Draws first, then lane j of draw b read as 16-bit number 4b + j (what memcpy gives on a
  // little-endian machine).
  constexpr int64_t kDraws = 256;
  uint64_t draws[kDraws];
  uint16_t uniforms[4 * kDraws];
  const T scale = static_cast<T>(scale_);
  const auto cut = static_cast<int32_t>(cut_);
  while (count > 0) {
    const int64_t first = begin >> 2, lead = begin & 3;
    const int64_t n = std::min(count, 4 * kDraws - lead), blocks = (lead + n + 3) >> 2;
    draw(seed_, static_cast<uint64_t>(first), blocks, draws);
    std::memcpy(uniforms, draws, static_cast<size_t>(blocks) * sizeof(uint64_t));
    keep(uniforms + lead, n, cut, scale, out);
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
