#include "core/kernels/cpu/gemm_team.h"

#include "core/kernels/cpu/blas_gemm.h"

#include <omp.h>

#include <algorithm>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace comera::cpu {

namespace {

// Products below this many multiply-adds run whole: a block costs a BLAS call.
constexpr int64_t kShareMacs = int64_t{1} << 18;
// Blocks are at least this many rows (or columns), and at most kMaxBlocks of them.
constexpr int64_t kBlockMin = 16, kMaxBlocks = 8;

void pause() {
#if defined(__x86_64__)
  _mm_pause();
#endif
}

}  // namespace

struct GemmTeam::Slot {
  // The product, set by its owner before `live` and read by helpers after it.
  bool ta = false, tb = false, by_rows = true;
  int64_t m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0, span = 0, blocks = 0;
  const float *A = nullptr, *B = nullptr;
  float* C = nullptr;
  std::atomic<bool> live{false};
  std::atomic<int64_t> next{0}, finished{0}, helpers{0};
};

GemmTeam::GemmTeam(int threads, int64_t tasks)
    : threads_(threads), slots_(new Slot[static_cast<size_t>(std::max(1, threads))]), remaining_(tasks) {}

GemmTeam::~GemmTeam() = default;

void GemmTeam::run_blocks(Slot& s) {
  for (int64_t b; (b = s.next.fetch_add(1)) < s.blocks;) {
    const int64_t lo = s.span * b / s.blocks, hi = s.span * (b + 1) / s.blocks;
    if (s.by_rows)  // rows [lo, hi) of C: rows of op(A)
      cpu::gemm<float>(s.ta, s.tb, hi - lo, s.n, s.k, 1, s.ta ? s.A + lo : s.A + lo * s.lda, s.lda, s.B,
                  s.ldb, 0, s.C + lo * s.ldc, s.ldc);
    else  // columns [lo, hi) of C: columns of op(B)
      cpu::gemm<float>(s.ta, s.tb, s.m, hi - lo, s.k, 1, s.A, s.lda, s.tb ? s.B + lo * s.ldb : s.B + lo,
                  s.ldb, 0, s.C + lo, s.ldc);
    s.finished.fetch_add(1);
  }
}

void GemmTeam::gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* A, int64_t lda,
                    const float* B, int64_t ldb, float* C, int64_t ldc) {
  const bool by_rows = m >= n;
  const int64_t span = by_rows ? m : n;
  const int64_t blocks = std::min(kMaxBlocks, span / kBlockMin);
  if (threads_ < 2 || m * n * k < kShareMacs || blocks < 2)
    return cpu::gemm<float>(ta, tb, m, n, k, 1, A, lda, B, ldb, 0, C, ldc);
  Slot& s = slots_[omp_get_thread_num()];
  s.ta = ta, s.tb = tb, s.by_rows = by_rows;
  s.m = m, s.n = n, s.k = k, s.lda = lda, s.ldb = ldb, s.ldc = ldc, s.span = span, s.blocks = blocks;
  s.A = A, s.B = B, s.C = C;
  s.next.store(0);
  s.finished.store(0);
  s.live.store(true);
  run_blocks(s);
  while (s.finished.load() < blocks) pause();
  // No helper may still be reading the slot when the owner reuses it.
  s.live.store(false);
  while (s.helpers.load() > 0) pause();
}

void GemmTeam::done() { remaining_.fetch_sub(1); }

void GemmTeam::help() {
  while (remaining_.load() > 0) {
    for (int t = 0; t < threads_; ++t) {
      Slot& s = slots_[t];
      if (!s.live.load()) continue;
      s.helpers.fetch_add(1);
      if (s.live.load()) run_blocks(s);
      s.helpers.fetch_sub(1);
    }
    pause();
  }
}

}  // namespace comera::cpu
