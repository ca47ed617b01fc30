#pragma once
// LibTorch 1.13 defaults to one intra-op thread on small machines, so every
// entry point sets the count itself.

namespace comera {

// n <= 0 means all hardware threads. Returns the count in force.
int configure_threads(int n);

// While alive, ATen ops and BLAS calls made by this thread use at most n threads (OpenMP's
// per-thread count). Small tensors gain nothing from threads, and every parallel region is a
// barrier, which a busy machine makes slow.
class ThreadLimit {
 public:
  explicit ThreadLimit(int n);
  ~ThreadLimit();
  ThreadLimit(const ThreadLimit&) = delete;
  ThreadLimit& operator=(const ThreadLimit&) = delete;

 private:
  int saved_;
};

}  // namespace comera
