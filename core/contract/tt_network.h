#pragma once
// The tensor network of a TT linear layer (METHOD §1) for B tokens, closed by the output
// gradient: X (b, i_1..i_d), cores G_1..G_2d (r_{k-1}, s_k, r_k) with the boundary bonds of
// size 1 left out, and dY (b, j_1..j_d). Operand ids: X = 0, G_k = k, dY = 2d+1.
// The forward network is everything but dY (its indices are Y's); the gradient network of
// operand k is everything but k.
#include "core/contract/tensor_network.h"
#include "core/formats/tt_shape.h"

#include <cstdint>
#include <vector>

namespace comera::contract {

class TTNetwork {
 public:
  TTNetwork(const TTShape& shape, int64_t tokens);

  const TensorNetwork& net() const { return net_; }
  int d() const { return d_; }
  int x() const { return 0; }
  int core(int k) const { return k; }  // k = 1..2d
  int dy() const { return 2 * d_ + 1; }
  int64_t tokens() const { return tokens_; }
  Mask forward_leaves() const { return net_.all() & ~bit(dy()); }
  Mask gradient_leaves(int operand) const { return net_.all() & ~bit(operand); }
  Mask input_cores() const;   // G_1..G_d
  Mask output_cores() const;  // G_{d+1}..G_2d

 private:
  TensorNetwork net_;
  int d_ = 0;
  int64_t tokens_ = 0;
};

}  // namespace comera::contract
