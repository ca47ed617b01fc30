#include "core/contract/order.h"

#include "core/util/error.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <utility>

namespace comera::contract {

namespace {

Mask lowest(Mask m) { return m & (~m + 1); }

std::pair<Mask, Mask> canonical(const Step& s) {
  return lowest(s.a) < lowest(s.b) ? std::make_pair(s.a, s.b) : std::make_pair(s.b, s.a);
}

struct Parser {
  const std::string& text;
  const TensorNetwork& net;
  size_t pos = 0;
  std::vector<Step> steps;

  [[noreturn]] void fail(const std::string& what) const {
    throw Error("contraction order '" + text + "': " + what + " at character " +
                std::to_string(pos) + " (expected nested pairs like ((X,G1),G2))");
  }
  void skip_space() {
    while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
  }
  void expect(char c) {
    skip_space();
    if (pos >= text.size() || text[pos] != c) fail(std::string("missing '") + c + "'");
    ++pos;
  }
  Mask node() {
    skip_space();
    if (pos < text.size() && text[pos] == '(') {
      ++pos;
      const Mask a = node();
      expect(',');
      const Mask b = node();
      expect(')');
      if (a & b) fail("an operand appears twice");
      steps.push_back({a, b});
      return a | b;
    }
    const size_t start = pos;
    while (pos < text.size() && std::isalnum(static_cast<unsigned char>(text[pos]))) ++pos;
    if (pos == start) fail("missing operand name");
    return bit(net.find_operand(text.substr(start, pos - start)));
  }
};

}  // namespace

Order::Order(Mask leaves, std::vector<Step> steps) : leaves_(leaves), steps_(std::move(steps)) {
  std::vector<Mask> live;  // results not yet consumed
  Mask used = 0;
  auto take = [&](Mask m) {
    if (popcount(m) == 1 && (m & leaves_) && !(m & used)) {
      used |= m;
      return true;
    }
    auto it = std::find(live.begin(), live.end(), m);
    if (it == live.end()) return false;
    live.erase(it);
    return true;
  };
  for (const Step& s : steps_) {
    if (!s.a || !s.b || (s.a & s.b) || !take(s.a) || !take(s.b))
      throw Error("contraction order: step joins sets that are not available operands or results");
    live.push_back(s.result());
  }
  const bool single = popcount(leaves_) == 1 && steps_.empty();
  if (!single && (live.size() != 1 || live.front() != leaves_ || used != leaves_))
    throw Error("contraction order: steps do not form one tree over all operands");
}

const Step& Order::split(Mask node) const {
  for (const Step& s : steps_)
    if (s.result() == node) return s;
  throw Error("contraction order has no node for operand set " + std::to_string(node));
}

bool Order::is_node(Mask node) const {
  if (popcount(node) == 1) return (node & leaves_) != 0;
  for (const Step& s : steps_)
    if (s.result() == node) return true;
  return false;
}

std::string Order::str(const TensorNetwork& net) const {
  std::function<std::string(Mask)> rec = [&](Mask m) -> std::string {
    if (popcount(m) == 1) return net.operand(__builtin_ctz(m)).name;
    const auto [a, b] = canonical(split(m));
    return "(" + rec(a) + "," + rec(b) + ")";
  };
  return rec(leaves_);
}

Order Order::parse(const std::string& text, const TensorNetwork& net) {
  Parser p{text, net, 0, {}};
  const Mask leaves = p.node();
  p.skip_space();
  if (p.pos != text.size()) p.fail("trailing text");
  return Order(leaves, std::move(p.steps));
}

bool Order::operator==(const Order& other) const {
  if (leaves_ != other.leaves_ || steps_.size() != other.steps_.size()) return false;
  auto splits = [](const std::vector<Step>& steps) {
    std::vector<std::pair<Mask, Mask>> v;
    for (const Step& s : steps) v.push_back(canonical(s));
    std::sort(v.begin(), v.end());
    return v;
  };
  return splits(steps_) == splits(other.steps_);
}

}  // namespace comera::contract
