#include "search/bench/step_profile.h"

#include "core/util/step_parts.h"

#include <ATen/ATen.h>
#include <ATen/SequenceNumber.h>
#include <ATen/record_function.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>

namespace comera {

namespace {

using Clock = std::chrono::steady_clock;
using step_parts::kCount;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// An open scope or backward node on this thread: its part (-1: none), whether it runs in the
// backward pass, and the time its children took, so that each part gets its own time only.
struct Frame {
  int part;
  bool backward;
  Clock::time_point start;
  double child_ms;
  uint64_t first_node;  // the autograd sequence number when a forward scope opened
};

// Autograd nodes [first, last) that a forward scope of `part` made.
struct NodeRange {
  uint64_t first, last;
  int part;
};

struct Totals {
  std::mutex mutex;
  std::array<std::array<double, 2>, kCount> ms{};  // [part][backward]
  std::vector<NodeRange> ranges;
  std::map<std::string, double> rest_ms;  // by name: outside every part
};

// Marks a callback that pushed a frame (an op inside another frame pushes none).
struct Pushed : at::ObserverContext {};

Totals* g_totals = nullptr;
thread_local std::vector<Frame> t_frames;

// A readable name: comera's autograd functions by their class, and autograd's own work around a
// node (RecordFunction's "autograd::engine::evaluate_function: NODE") as "autograd after NODE".
std::string short_name(std::string name) {
  const std::string engine = "autograd::engine::evaluate_function: ";
  const bool after = name.rfind(engine, 0) == 0;
  if (after) name.erase(0, engine.size());
  const std::string cpp_node = "torch::autograd::CppNode<";
  if (name.rfind(cpp_node, 0) == 0 && name.back() == '>') {
    name = name.substr(cpp_node.size(), name.size() - cpp_node.size() - 1);
    const auto scope = name.rfind("::");
    if (scope != std::string::npos) name.erase(0, scope + 2);
  }
  return after ? "autograd after " + name : name;
}

int scope_part(const char* name) {
  for (int p = 0; p < kCount; ++p)
    if (std::strcmp(name, step_parts::scope_name(static_cast<step_parts::Part>(p))) == 0) return p;
  return -1;
}

int node_part(int64_t sequence_nr) {
  const auto seq = static_cast<uint64_t>(sequence_nr);
  std::lock_guard<std::mutex> lock(g_totals->mutex);
  for (auto it = g_totals->ranges.rbegin(); it != g_totals->ranges.rend(); ++it)
    if (seq >= it->first && seq < it->last) return it->part;
  return -1;
}

// Scopes and backward nodes always open a frame; an ATen op only outside every frame (a top-level
// op outside the parts, or autograd's own work between nodes), to name what the rest is.
std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
  if (fn.scope() == at::RecordScope::FUNCTION && !t_frames.empty()) return nullptr;
  const bool node = fn.scope() == at::RecordScope::BACKWARD_FUNCTION;
  const bool in_backward = node || (!t_frames.empty() && t_frames.back().backward);
  const int part = node ? node_part(fn.seqNr()) : scope_part(fn.name());
  t_frames.push_back({part, in_backward, Clock::now(), 0.0, at::sequence_number::peek()});
  return std::make_unique<Pushed>();
}

void on_end(const at::RecordFunction& fn, at::ObserverContext* pushed) {
  if (!pushed || t_frames.empty()) return;
  const Frame f = t_frames.back();
  t_frames.pop_back();
  const double ms = ms_since(f.start);
  if (f.part >= 0) {
    std::lock_guard<std::mutex> lock(g_totals->mutex);
    g_totals->ms[f.part][f.backward ? 1 : 0] += ms - f.child_ms;
    if (!f.backward && fn.scope() == at::RecordScope::USER_SCOPE)
      g_totals->ranges.push_back({f.first_node, at::sequence_number::peek(), f.part});
  } else if (fn.scope() != at::RecordScope::USER_SCOPE) {
    const auto name = short_name(fn.name());
    std::lock_guard<std::mutex> lock(g_totals->mutex);
    g_totals->rest_ms[name] += ms - f.child_ms;
  }
  if (!t_frames.empty()) t_frames.back().child_ms += ms;
}

}  // namespace

nlohmann::json StepProfile::to_json() const {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& p : parts) {
    nlohmann::json row{{"part", p.part}, {"ms", p.ms}, {"share", step_ms > 0 ? p.ms / step_ms : 0}};
    if (p.split) row["forward_ms"] = p.forward_ms, row["backward_ms"] = p.backward_ms;
    if (p.flops > 0) {
      row["gflop"] = p.flops * 1e-9;
      row["gflops"] = p.flops / (p.ms * 1e6);
      row["of_gemm_rate"] = p.flops / (p.ms * 1e6) / gemm_gflops;
    }
    rows.push_back(row);
  }
  nlohmann::json rest = nlohmann::json::array();
  for (const auto& [name, ms] : rest_by_name) rest.push_back({{"name", name}, {"ms", ms}});
  return {{"steps", steps}, {"step_ms", step_ms}, {"gemm_gflops", gemm_gflops},
          {"gemm_precision", gemm_precision}, {"parts", rows}, {"rest_by_name", rest}};
}

StepProfile profile_steps(const std::function<void()>& step, int steps) {
  Totals totals;
  g_totals = &totals;
  for (int p = 0; p < kCount; ++p) step_parts::take_flops(static_cast<step_parts::Part>(p));
  step_parts::set_counting(true);
  const auto handle = at::addGlobalCallback(
      at::RecordFunctionCallback(on_start, on_end)
          .scopes({at::RecordScope::USER_SCOPE, at::RecordScope::BACKWARD_FUNCTION, at::RecordScope::FUNCTION}));
  StepProfile profile;
  profile.steps = std::max(1, steps);
  double wall = 0;
  for (int i = 0; i < profile.steps; ++i) {
    {
      std::lock_guard<std::mutex> lock(totals.mutex);
      totals.ranges.clear();  // sequence numbers only grow; last step's ranges are spent
    }
    const auto start = Clock::now();
    step();
    wall += ms_since(start);
  }
  at::removeCallback(handle);
  step_parts::set_counting(false);
  g_totals = nullptr;

  const double n = profile.steps;
  profile.step_ms = wall / n;
  double accounted = 0;
  for (int p = 0; p < kCount; ++p) {
    StepPartProfile part;
    part.part = step_parts::label(static_cast<step_parts::Part>(p));
    part.forward_ms = totals.ms[p][0] / n;
    part.backward_ms = totals.ms[p][1] / n;
    part.ms = part.forward_ms + part.backward_ms;
    part.flops = step_parts::take_flops(static_cast<step_parts::Part>(p)) / n;
    accounted += part.ms;
    profile.parts.push_back(part);
  }
  StepPartProfile rest;
  rest.part = "element-wise and other";
  rest.ms = std::max(0.0, profile.step_ms - accounted);
  rest.split = false;
  profile.parts.push_back(rest);
  for (const auto& [name, ms] : totals.rest_ms) profile.rest_by_name.emplace_back(name, ms / n);
  std::sort(profile.rest_by_name.begin(), profile.rest_by_name.end(),
            [](const auto& a, const auto& b) { return a.second > b.second; });
  return profile;
}

double measure_gemm_gflops(int64_t n, int repeats, Precision precision) {
  const auto dtype = precision == Precision::Bf16 ? at::kBFloat16 : at::kFloat;
  const auto a = at::randn({n, n}).to(dtype), b = at::randn({n, n}).to(dtype);
  auto c = at::empty({n, n}, dtype);
  at::mm_out(c, a, b);
  double best = 0;
  for (int i = 0; i < std::max(1, repeats); ++i) {
    const auto start = Clock::now();
    at::mm_out(c, a, b);
    const double ms = ms_since(start);
    best = i == 0 ? ms : std::min(best, ms);
  }
  return 2.0 * static_cast<double>(n * n * n) / (best * 1e6);
}

}  // namespace comera
