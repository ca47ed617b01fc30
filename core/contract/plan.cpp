#include "core/contract/plan.h"

#include "core/util/error.h"

namespace comera::contract {

ContractionPlan::ContractionPlan(std::string name_, Order forward_, Order backward_)
    : name(std::move(name_)), forward(std::move(forward_)), backward(std::move(backward_)) {
  if (forward.leaves() != backward.leaves())
    throw Error("contraction plan '" + name + "': forward and backward orders cover different operands");
}

std::string ContractionPlan::str(const TensorNetwork& net) const {
  return consistent() ? forward.str(net) : forward.str(net) + ";" + backward.str(net);
}

ContractionPlan ContractionPlan::parse(const std::string& text, const TensorNetwork& net,
                                       const std::string& name) {
  const auto semi = text.find(';');
  if (semi == std::string::npos) return ContractionPlan(name, Order::parse(text, net));
  return ContractionPlan(name, Order::parse(text.substr(0, semi), net),
                         Order::parse(text.substr(semi + 1), net));
}

int ContractionPlan::output_operand(const TensorNetwork& net) const {
  const Mask rest = net.all() & ~forward.leaves();
  if (popcount(rest) != 1)
    throw Error("contraction plan '" + name + "' must cover every operand but the output gradient (covers " +
                std::to_string(popcount(forward.leaves())) + " of " + std::to_string(net.operands()) + ")");
  return __builtin_ctz(rest);
}

}  // namespace comera::contract
