#include "core/util/threads.h"

#include <ATen/Parallel.h>

#include <thread>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace comera {

int configure_threads(int n) {
  if (n <= 0) n = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  at::set_num_threads(n);
  return at::get_num_threads();
}

#ifdef _OPENMP
ThreadLimit::ThreadLimit(int n) : saved_(omp_get_max_threads()) { omp_set_num_threads(n); }
ThreadLimit::~ThreadLimit() { omp_set_num_threads(saved_); }
#else
ThreadLimit::ThreadLimit(int) : saved_(1) {}
ThreadLimit::~ThreadLimit() = default;
#endif

}  // namespace comera
