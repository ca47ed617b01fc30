#include "search/bench/all_reduce_projection.h"

namespace comera {

double ring_all_reduce_seconds(int64_t bytes, int ranks, double gbit_per_s) {
  if (ranks < 2) return 0;
  const double moved = 2.0 * (ranks - 1) / ranks * static_cast<double>(bytes);
  return moved * 8 / (gbit_per_s * 1e9);
}

double projected_step_seconds(double compute_s, int64_t bytes, int ranks, double gbit_per_s) {
  return compute_s + ring_all_reduce_seconds(bytes, ranks, gbit_per_s);
}

}  // namespace comera
