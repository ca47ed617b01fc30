#include "core/contract/tt_network.h"

#include "core/util/error.h"

namespace comera::contract {

TTNetwork::TTNetwork(const TTShape& shape, int64_t tokens) : d_(static_cast<int>(shape.d())),
                                                             tokens_(tokens) {
  if (tokens < 1)
    throw Error("TT network for " + shape.str() + ": token count " + std::to_string(tokens) +
                " must be >= 1");
  const int b = net_.add_index("b", tokens);
  std::vector<int> modes, bonds;
  for (int k = 0; k < 2 * d_; ++k)
    modes.push_back(net_.add_index((k < d_ ? "i" : "j") + std::to_string(k % d_ + 1), shape.mode(k)));
  for (int k = 1; k < 2 * d_; ++k) bonds.push_back(net_.add_index("r" + std::to_string(k), shape.ranks()[k]));

  std::vector<int> x{b}, dy{b};
  x.insert(x.end(), modes.begin(), modes.begin() + d_);
  dy.insert(dy.end(), modes.begin() + d_, modes.end());
  net_.add_operand("X", x);
  for (int k = 1; k <= 2 * d_; ++k) {
    std::vector<int> idx;
    if (k > 1) idx.push_back(bonds[k - 2]);
    idx.push_back(modes[k - 1]);
    if (k < 2 * d_) idx.push_back(bonds[k - 1]);
    net_.add_operand("G" + std::to_string(k), idx);
  }
  net_.add_operand("dY", dy);
  net_.validate();
}

Mask TTNetwork::input_cores() const {
  Mask m = 0;
  for (int k = 1; k <= d_; ++k) m |= bit(k);
  return m;
}

Mask TTNetwork::output_cores() const {
  Mask m = 0;
  for (int k = d_ + 1; k <= 2 * d_; ++k) m |= bit(k);
  return m;
}

}  // namespace comera::contract
