#pragma once
// LayerNorm of one row of r = x + m ⊙ f (a post-LN residual branch with its dropout
// multipliers), forward and backward, float32 with AVX-512 (cpu_has_avx512f()): the residual
// add, the norm and, backward, both branches' gradients in one pass over the row. Sums run in
// 16 lanes; the variance is the biased one over the row, as LayerNorm's.
#include <cstdint>

namespace comera::cpu {

// r = x + m ⊙ f (m null: x + f), xhat = (r - mean(r))·rstd with rstd = 1/sqrt(var(r) + eps),
// y = xhat ⊙ w + b; rows of D. Returns rstd.
float layer_norm_row(const float* x, const float* f, const float* m, int64_t D, const float* w,
                     const float* b, float eps, float* xhat, float* y);

// Its backward from dy: with g = dy ⊙ w, dr = rstd·(g - mean(g) - xhat·mean(g ⊙ xhat));
// dx = dr, df = m ⊙ dr (dr when m is null); dw += dy ⊙ xhat and db += dy.
void layer_norm_row_backward(const float* dy, const float* xhat, float rstd, const float* m,
                             int64_t D, const float* w, float* dx, float* df, float* dw, float* db);

}  // namespace comera::cpu
