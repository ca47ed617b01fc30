#pragma once
// The three named orders of a TT layer's forward network (METHOD §4).
#include "core/contract/order.h"
#include "core/contract/tt_network.h"

namespace comera::contract {

// (X·L)·R with L = G_1··G_d merged from the left and R = G_{d+1}··G_2d from the right: the
// authors' path, B·r_d·(in+out) multiply-adds per forward besides the batch-free merges.
Order merged_order(const TTNetwork& tt);
// ((X·G_1)·G_2)··G_2d: X contracted core by core.
Order core_by_core_order(const TTNetwork& tt);
// X·(L·R): reconstruct W, then one GEMM.
Order reconstruct_order(const TTNetwork& tt);

}  // namespace comera::contract
