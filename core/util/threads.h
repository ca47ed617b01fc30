#pragma once
// LibTorch 1.13 defaults to one intra-op thread on small machines, so every
// entry point sets the count itself.

namespace comera {

// The cores this process may run on (its CPU affinity, e.g. under taskset or a container's
// cpuset), at least 1.
int available_cores();

// n == 0 means all available cores; more than them is capped to them (threads beyond the cores
// only wait on each other at every parallel region). Throws comera::Error for n < 0. Returns the
// count in force.
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
