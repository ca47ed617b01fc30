#include "core/contract/tensor_network.h"

#include "core/util/error.h"

namespace comera::contract {

int TensorNetwork::add_index(std::string name, int64_t size) {
  if (size < 1) throw Error("tensor network index " + name + " has size " + std::to_string(size) +
                            "; sizes must be >= 1");
  indices_.push_back({std::move(name), size});
  ends_.push_back(0);
  return static_cast<int>(indices_.size()) - 1;
}

int TensorNetwork::add_operand(std::string name, std::vector<int> indices) {
  const int k = operands();
  if (k >= 32) throw Error("tensor network: more than 32 operands (" + name + ")");
  for (int i : indices) {
    if (i < 0 || i >= static_cast<int>(indices_.size()))
      throw Error("tensor network operand " + name + " uses unknown index id " + std::to_string(i));
    if (ends_[i] & bit(k))
      throw Error("tensor network operand " + name + " repeats index " + indices_[i].name);
    ends_[i] |= bit(k);
  }
  operands_.push_back({std::move(name), std::move(indices)});
  return k;
}

void TensorNetwork::validate() const {
  for (size_t i = 0; i < indices_.size(); ++i)
    if (popcount(ends_[i]) != 2)
      throw Error("tensor network index " + indices_[i].name + " joins " +
                  std::to_string(popcount(ends_[i])) +
                  " operands; every index must join exactly two (add an output placeholder "
                  "operand for open indices)");
}

int TensorNetwork::find_operand(const std::string& name) const {
  std::string known;
  for (int k = 0; k < operands(); ++k) {
    if (operands_[k].name == name) return k;
    known += (k ? ", " : "") + operands_[k].name;
  }
  throw Error("tensor network has no operand '" + name + "' (operands: " + known + ")");
}

std::vector<int> TensorNetwork::open(Mask s) const {
  std::vector<int> out;
  for (size_t i = 0; i < ends_.size(); ++i)
    if (popcount(ends_[i] & s) == 1) out.push_back(static_cast<int>(i));
  return out;
}

double TensorNetwork::size(Mask s) const {
  double n = 1;
  for (size_t i = 0; i < ends_.size(); ++i)
    if (popcount(ends_[i] & s) == 1) n *= static_cast<double>(indices_[i].size);
  return n;
}

double TensorNetwork::macs(Mask a, Mask b) const {
  double n = 1;
  for (size_t i = 0; i < ends_.size(); ++i)
    if (popcount(ends_[i] & a) == 1 || popcount(ends_[i] & b) == 1)
      n *= static_cast<double>(indices_[i].size);
  return n;
}

bool TensorNetwork::adjacent(Mask a, Mask b) const {
  for (Mask e : ends_)
    if ((e & a) && (e & b)) return true;
  return false;
}

Mask TensorNetwork::neighbours(Mask s) const {
  Mask n = 0;
  for (Mask e : ends_)
    if (e & s) n |= e;
  return n & ~s;
}

bool TensorNetwork::connected(Mask s) const {
  if (!s) return false;
  Mask reached = s & (~s + 1);  // lowest operand
  for (;;) {
    const Mask next = reached | (neighbours(reached) & s);
    if (next == reached) return reached == s;
    reached = next;
  }
}

}  // namespace comera::contract
