#pragma once
// One AdamW update over contiguous float memory with AVX-512: the same operations in the same
// order as the scalar update in fused_adamw.cpp (no FMA contraction), so the same results, 16
// entries at a time. Compiled without AVX-512 the scalar loop leaves sqrt and the division
// unvectorised; over a model's 1.5M parameters that was 4.5 ms of a 60 ms batch-1 step.
#include <cstdint>

namespace comera::cpu {

// The update's constants for this step: p <- p·decay - step·m / (sqrt(v)·inv_bias2 + eps) with
// m <- b1·m + c1·g and v <- b2·v + c2·g·g (v <- max(vmax, v) first when vmax is given).
struct AdamWConstants {
  float decay, b1, b2, c1, c2, eps, step, inv_bias2;
};

// Whether adamw_step() runs here (an AVX-512F CPU).
bool adamw_step_available();

// Entries [0, n) of p, m, v (and vmax, or null) given the gradient g.
void adamw_step(float* p, const float* g, float* m, float* v, float* vmax, int64_t n,
                const AdamWConstants& c);

}  // namespace comera::cpu
