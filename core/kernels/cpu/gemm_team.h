#pragma once
// The threads of one OpenMP parallel region running independent tasks of uneven size (the sides
// of merged-path chains, whose last merge can be four times the rest): a task runs its big
// products through gemm(), which splits them in blocks of rows (or columns) that a thread
// whose own tasks are done takes a share of in help(). Float32 BLAS products, row-major.
#include <atomic>
#include <cstdint>
#include <memory>

namespace comera::cpu {

class GemmTeam {
 public:
  // threads: the region's thread count; tasks: how many tasks will call done().
  GemmTeam(int threads, int64_t tasks);
  ~GemmTeam();
  GemmTeam(const GemmTeam&) = delete;
  GemmTeam& operator=(const GemmTeam&) = delete;

  // C (m x n) = op(A)·op(B), as cpu::gemm<float> with alpha 1 and beta 0; called from inside the
  // region, it returns when every block is done.
  void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* A, int64_t lda,
            const float* B, int64_t ldb, float* C, int64_t ldc);
  // One task has finished.
  void done();
  // Takes blocks of the products other threads are running until every task has finished.
  void help();

 private:
  struct Slot;
  void run_blocks(Slot& slot);

  int threads_;
  std::unique_ptr<Slot[]> slots_;  // one per thread: the product it is running
  std::atomic<int64_t> remaining_;
};

}  // namespace comera::cpu
