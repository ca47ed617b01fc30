#pragma once
// Counter-based dropout mask. ATen's CPU dropout draws every element from one mt19937 stream
// (bernoulli_), which took a quarter of a tensorized training step; here element i is kept iff
// its 16-bit uniform, lane i mod 4 of the 64-bit draw SplitMix64(seed, i / 4), is at least
// round(p * 65536). The seed is the whole state: backward redraws the mask forward used instead
// of storing it, and any range of elements can be drawn on its own (chunks drawn in parallel).
// The CPU kernel that applies a mask is core/kernels/cpu/apply_mask.h.
#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>

#include <cstdint>

namespace comera {

class DropoutMask {
 public:
  // p in (0, 1); the seed is drawn from this thread's DropoutSeeds generator, else from the
  // global CPU generator, so runs stay reproducible.
  explicit DropoutMask(double p);
  DropoutMask(double p, uint64_t seed);

  double p() const { return p_; }
  uint64_t seed() const { return seed_; }

  // out[j] = 1/(1-p) if element begin + j is kept, else 0, for 0 <= j < count (float, double).
  template <typename T>
  void multipliers(int64_t begin, int64_t count, T* out) const;

  // The multipliers of elements 0..t.numel()-1 as a tensor of t's shape, dtype and device (any
  // floating dtype), element i at row-major position i: the same hash in ATen integer ops on
  // t's device, equal bit for bit to multipliers().
  at::Tensor multipliers_like(const at::Tensor& t) const;

 private:
  double p_;
  uint64_t seed_;
  uint32_t cut_;
  double scale_;
};

// While it lives, masks made on this thread draw their seeds from `generator` (a CPU generator:
// a trainer's own), so two trainers in one process draw from streams of their own.
class DropoutSeeds {
 public:
  explicit DropoutSeeds(at::Generator generator);
  ~DropoutSeeds();
  DropoutSeeds(const DropoutSeeds&) = delete;
  DropoutSeeds& operator=(const DropoutSeeds&) = delete;

 private:
  at::Generator previous_;
};

}  // namespace comera
