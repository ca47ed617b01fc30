#pragma once
// Splitting a sweep's trials across processes or machines: shard i of N (1-based) takes the
// trials at positions p with p mod N = i - 1 of the expansion order. Deterministic, disjoint,
// and together complete; round-robin mixes baselines and targets into every shard.
#include <cstddef>
#include <string>
#include <vector>

namespace comera::sweep {

struct Shard {
  size_t index = 1, count = 1;  // 1 <= index <= count
};

// "i/N"; throws comera::Error naming the problem.
Shard parse_shard(const std::string& text);

// Positions (0-based, increasing) of this shard's trials among `total`.
std::vector<size_t> shard_positions(size_t total, const Shard& shard);

}  // namespace comera::sweep
