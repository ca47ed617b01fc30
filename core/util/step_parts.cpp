#include "core/util/step_parts.h"

#include <array>
#include <atomic>

namespace comera::step_parts {

namespace {

std::atomic<bool> g_counting{false};
std::array<std::atomic<double>, kCount> g_flops{};

}  // namespace

const char* scope_name(Part part) {
  static constexpr std::array<const char*, kCount> names{
      "comera::linear",        "comera::attention",  "comera::embedding",
      "comera::residual_norm", "comera::activation", "comera::size_terms",
      "comera::optimizer"};
  return names[part];
}

const char* label(Part part) {
  static constexpr std::array<const char*, kCount> labels{
      "linear layers", "attention (products, softmax, bias, dropout)", "embedding lookup",
      "residual adds, dropout, layer norms", "GELU", "size terms", "optimiser step"};
  return labels[part];
}

bool counting() { return g_counting.load(std::memory_order_relaxed); }

void set_counting(bool on) { g_counting.store(on); }

void add_flops(Part part, double flops) {
  auto& total = g_flops[part];
  double seen = total.load(std::memory_order_relaxed);
  while (!total.compare_exchange_weak(seen, seen + flops, std::memory_order_relaxed)) {
  }
}

double take_flops(Part part) { return g_flops[part].exchange(0.0); }

}  // namespace comera::step_parts
