#pragma once
// What a gradient all-reduce would cost on a slower link than the one it was measured on: a
// ring all-reduce sends and receives 2 (W - 1) / W times the buffer per rank (reduce-scatter,
// then all-gather), so on a link of G Gbit/s it takes at least that many bytes x 8 / G ns.
// Latency is left out, so for a step without overlap the projection is a lower bound; overlapping
// communication with backward (as DDP does) can hide part of it.
#include <cstdint>

namespace comera {

double ring_all_reduce_seconds(int64_t bytes, int ranks, double gbit_per_s);

// A step of `compute_s` seconds (the waits for the slowest rank included) followed by the
// all-reduce of `bytes` over `ranks` ranks.
double projected_step_seconds(double compute_s, int64_t bytes, int ranks, double gbit_per_s);

}  // namespace comera
