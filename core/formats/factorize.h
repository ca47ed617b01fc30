#pragma once
// Balanced factorizations of layer sizes into tensor modes.
#include <cstdint>
#include <utility>
#include <vector>

namespace comera {

// All ways to write n as a product of d factors >= 1, each in descending order, most
// balanced first (smallest spread of log-factors).
std::vector<std::vector<int64_t>> balanced_factorizations(int64_t n, int d);

// Mode pairs for an in -> out TT layer, most balanced first. Input modes descend and output
// modes ascend, so the small modes meet at the middle bond (the paper's convention:
// 768 -> 768 as [12,8,8|8,8,12]).
std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> propose_tt_modes(
    int64_t in, int64_t out, int d, int count = 5);

// d balanced modes whose product is the smallest found >= n (an embedding's rows, padded up):
// every mode starts at ceil(n^(1/d)), then each in turn is lowered while the product still
// covers n. Sorted largest first.
std::vector<int64_t> covering_modes(int64_t n, int d);

// Modes of a TTM table of `rows` x `dim` in d cores: covering_modes(rows, d) (rows padded up)
// and the most balanced exact factorization of dim.
struct TTMModes {
  std::vector<int64_t> vocab_modes, emb_modes;
};
TTMModes propose_ttm_modes(int64_t rows, int64_t dim, int d);

}  // namespace comera
