#pragma once
// Row softmax in place with an additive bias row, for the fused attention core: one row of a
// (batch entry, head) score block at a time, so the block stays in cache. Float rows use
// AVX-512 where the CPU has it (exp by range reduction and a degree-6 polynomial, within 2 ulp
// of expf); double rows, and float rows elsewhere, use std::exp.
#include <cstdint>

namespace comera::cpu {

// s[r, j] <- exp(v[r, j] - m_r) / sum_j exp(v[r, j] - m_r) with v = scale·s + bias[r·bias_ld + j]
// and m_r the row's max, for rows of n contiguous entries ld apart; bias may be null, bias_ld 0
// (one row for all). The vectorised float rows give exactly 0 where the biased score is over 87
// below the row's max (expf is denormal or 0 there).
template <typename T>
void softmax_rows(T* s, int64_t rows, int64_t n, int64_t ld, const T* bias, int64_t bias_ld,
                  T scale = 1);

// The softmax-and-dropout backward in place on a block: with P the probabilities and D the
// dropped ones (m ⊙ P), g <- scale·(D ⊙ g - P <g, D>) row by row (scale: the scores' own, so
// the gradient products need none). Float rows use AVX-512 where the CPU has it.
template <typename T>
void softmax_dropout_backward_rows(const T* P, const T* D, T* g, int64_t rows, int64_t n, int64_t ld,
                                   T scale);

}  // namespace comera::cpu
