#pragma once
// A small tensor network: operands with labelled indices and sizes. Networks here are closed
// (every index joins exactly two operands); an open output is modelled by a placeholder operand
// that carries the output indices, so the contraction of "everything but operand k" is both a
// forward result (k = the output placeholder) and a gradient (k = an input).
#include <cstdint>
#include <string>
#include <vector>

namespace comera::contract {

// A set of operands, bit k = operand k (at most 32 operands).
using Mask = uint32_t;

inline int popcount(Mask m) { return __builtin_popcount(m); }
inline Mask bit(int k) { return Mask{1} << k; }

struct NetIndex {
  std::string name;
  int64_t size = 1;
};

struct NetOperand {
  std::string name;
  std::vector<int> indices;  // index ids, in the order of the tensor's dimensions
};

class TensorNetwork {
 public:
  int add_index(std::string name, int64_t size);
  int add_operand(std::string name, std::vector<int> indices);
  // Throws comera::Error unless every index joins exactly two different operands.
  void validate() const;

  int operands() const { return static_cast<int>(operands_.size()); }
  const NetOperand& operand(int k) const { return operands_.at(k); }
  const NetIndex& index(int i) const { return indices_.at(i); }
  int find_operand(const std::string& name) const;  // throws naming the known operands
  Mask all() const { return (Mask{1} << operands()) - 1; }

  // Indices of the contraction of `s`: those with exactly one endpoint in s, ascending.
  std::vector<int> open(Mask s) const;
  // Elements of the contraction of s (product of its open index sizes).
  double size(Mask s) const;
  // Multiply-adds of contracting disjoint sets a and b: the product over every index touching
  // a or b that is open in a or in b.
  double macs(Mask a, Mask b) const;
  // True when a and b share an index (contracting them is not an outer product).
  bool adjacent(Mask a, Mask b) const;
  // True when the operands of s form one connected piece.
  bool connected(Mask s) const;
  // Operands sharing an index with s, outside s.
  Mask neighbours(Mask s) const;

 private:
  Mask ends(int index) const { return ends_.at(index); }
  std::vector<NetIndex> indices_;
  std::vector<NetOperand> operands_;
  std::vector<Mask> ends_;  // per index, the operands it touches
};

}  // namespace comera::contract
