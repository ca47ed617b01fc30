#include "core/util/threads.h"

#include "core/util/error.h"

#include <ATen/Parallel.h>
#include <sched.h>

#include <algorithm>
#include <string>
#include <thread>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace comera {

int available_cores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

int configure_threads(int n) {
  if (n < 0)
    throw Error("thread count " + std::to_string(n) + ": give 0 (all cores) or a count from 1");
  const int cores = available_cores();
  at::set_num_threads(n == 0 ? cores : std::min(n, cores));
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
