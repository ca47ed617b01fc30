#include "core/training/late_cuts.h"

#include "core/layers/size.h"
#include "core/training/objective.h"
#include "core/training/param_groups.h"
#include "core/training/rank_truncation.h"

#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

namespace comera {

namespace {

struct Candidate {
  MaskedSlice slice;
  double share = 0;   // of its bond's energy
  int64_t saved = 0;  // exact core entries the cut removes
};

// Squared norms of a core's slices along its right bond (last dim), with the left bond's
// rank vector applied.
at::Tensor right_bond_energy(const at::Tensor& core, const at::Tensor* d_left, double threshold) {
  auto c = core.detach().to(at::kDouble).reshape({core.size(0), -1, core.size(-1)});
  if (d_left) c = c * masked_rank_vector(d_left->detach().to(at::kDouble), threshold).view({-1, 1, 1});
  return c.pow(2).sum(at::IntArrayRef{0, 1});
}

// The same along a core's left bond (dim 0), with the right bond's rank vector applied.
at::Tensor left_bond_energy(const at::Tensor& core, const at::Tensor* d_right, double threshold) {
  auto c = core.detach().to(at::kDouble).reshape({core.size(0), -1, core.size(-1)});
  if (d_right) c = c * masked_rank_vector(d_right->detach().to(at::kDouble), threshold).view({1, 1, -1});
  return c.pow(2).sum(at::IntArrayRef{1, 2});
}

// Every live slice of every bond. A slice's energy d_i^2 ||left_i||^2 ||right_i||^2 is
// unchanged when scale moves between d_i and the two cores; its share of the bond's total says
// how much of the bond it carries.
std::vector<Candidate> candidates(const torch::nn::Module& model) {
  at::NoGradGuard no_grad;
  std::vector<Candidate> out;
  for (const auto& [name, layer] : tensorized_layers(model)) {
    const int64_t layer_exact = exact_size(*layer);
    if (layer_exact == 0) continue;
    const auto ds = layer->rank_vectors();
    const auto cores = layer->cores();
    const auto ranks = effective_ranks(*layer);
    const auto& chain = layer->chain();
    const double threshold = layer->threshold();
    for (size_t j = 0; j < ds.size(); ++j) {
      const auto d = ds[j].detach().to(at::kDouble).cpu();
      const auto live = d.abs() >= threshold;
      const auto energy = (d.pow(2) *
                           right_bond_energy(cores[j], j > 0 ? &ds[j - 1] : nullptr, threshold).cpu() *
                           left_bond_energy(cores[j + 1], j + 1 < ds.size() ? &ds[j + 1] : nullptr, threshold).cpu() *
                           live.to(at::kDouble))
                              .contiguous();
      const double total = energy.sum().item<double>();
      if (!(total > 0)) continue;
      const auto k = static_cast<int64_t>(j);
      const int64_t slice = ranks[j] * chain.core_size(k) + chain.core_size(k + 1) * ranks[j + 2];
      const int64_t saved = ranks[j + 1] == 1 ? layer_exact : slice;
      const auto* e = energy.data_ptr<double>();
      const auto* keep = live.contiguous().data_ptr<bool>();
      for (int64_t i = 0; i < energy.numel(); ++i)
        if (keep[i]) out.push_back({{name, k, i, d[i].item<double>()}, e[i] / total, saved});
    }
  }
  return out;
}

std::map<std::string, Tensorized*> layers_by_name(const torch::nn::Module& model) {
  std::map<std::string, Tensorized*> out;
  for (const auto& [name, layer] : tensorized_layers(model)) out[name] = layer;
  return out;
}

void set_entries(const torch::nn::Module& model, const std::vector<MaskedSlice>& slices, bool restore) {
  at::NoGradGuard no_grad;
  const auto layers = layers_by_name(model);
  for (const auto& s : slices) {
    auto d = layers.at(s.layer)->rank_vectors().at(static_cast<size_t>(s.bond));
    d.narrow(0, s.index, 1).fill_(restore ? s.value : 0.0);
  }
}

double exact_share(const torch::nn::Module& model, double initial_size) {
  return static_cast<double>(model_size(model).tensorized) / initial_size;
}

std::string fixed(double v, int digits = 3) {
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(digits);
  s << v;
  return s.str();
}

// "3 slices of 2 bonds in 1 layer (matrix)": the layers named when few.
std::string where(const std::vector<MaskedSlice>& slices) {
  std::set<std::pair<std::string, int64_t>> bonds;
  std::set<std::string> layers;
  for (const auto& s : slices) bonds.insert({s.layer, s.bond}), layers.insert(s.layer.empty() ? "model" : s.layer);
  std::string names;
  for (const auto& l : layers) names += (names.empty() ? "" : ", ") + l;
  const auto plural = [](size_t n, const std::string& what) {
    return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
  };
  return plural(slices.size(), "slice") + " of " + plural(bonds.size(), "bond") + " in " +
         plural(layers.size(), "layer") + (layers.size() <= 3 ? " (" + names + ")" : "");
}

}  // namespace

nlohmann::json LateCutState::to_json() const {
  auto slices = nlohmann::json::array();
  for (const auto& s : pending)
    slices.push_back({{"layer", s.layer}, {"bond", s.bond}, {"index", s.index}, {"value", s.value}});
  return {{"steps", steps}, {"loss_sum", loss_sum}, {"losses", losses},
          {"objective_before", objective_before}, {"cap", cap}, {"settled", settled},
          {"skip_next", skip_next}, {"pending", slices}};
}

LateCutState LateCutState::from_json(const nlohmann::json& j) {
  LateCutState s;
  s.steps = j.at("steps");
  s.loss_sum = j.at("loss_sum");
  s.losses = j.at("losses");
  s.objective_before = j.at("objective_before");
  s.cap = j.at("cap");
  s.settled = j.at("settled");
  s.skip_next = j.at("skip_next");
  for (const auto& p : j.at("pending"))
    s.pending.push_back({p.at("layer"), p.at("bond"), p.at("index"), p.at("value")});
  return s;
}

LateCuts::LateCuts(LateStageConfig config, double initial_size, LateCutState state)
    : config_(std::move(config)), initial_size_(initial_size), state_(std::move(state)) {}

bool LateCuts::record(double task_loss) {
  ++state_.steps;
  if (2 * state_.steps > config_.cut_every_steps) {
    state_.loss_sum += task_loss;
    ++state_.losses;
  }
  return state_.steps >= config_.cut_every_steps;
}

void LateCuts::hold(torch::nn::Module& model) const {
  if (pending()) set_entries(model, state_.pending, false);
}

double LateCuts::take_window_loss() {
  const double loss = state_.losses > 0 ? state_.loss_sum / static_cast<double>(state_.losses) : NAN;
  state_.steps = state_.losses = 0;
  state_.loss_sum = 0;
  return loss;
}

double LateCuts::objective(double loss, double size, double size_target) const {
  const auto& l = config_;
  return late_objective(at::scalar_tensor(loss, at::kDouble), at::scalar_tensor(size, at::kDouble),
                        l.loss_target, size_target, l.omega_loss, l.omega_size, l.rho)
      .item<double>();
}

LateCuts::Gaps LateCuts::gaps(double loss, double size, double size_target) const {
  return {config_.omega_loss * (loss - config_.loss_target), config_.omega_size * (size - size_target)};
}

CutDecision LateCuts::judge(torch::nn::Module& model, torch::optim::Optimizer& optimizer, double loss,
                            double size, double size_target, bool fold) {
  CutDecision out;
  out.loss = loss;
  out.size = size;
  out.objective = objective(loss, size, size_target);
  out.slices = static_cast<int64_t>(state_.pending.size());
  const auto measured = "objective " + fixed(out.objective) + " (L " + fixed(loss) + ", size " + fixed(size) +
                        " of the initial)";
  // The minimum of the max lies where the gaps cross. A cut of several slices that carried the
  // loss gap past the size gap may have passed a better point; it is undone and halved like a
  // rejected one, since cut slices never come back.
  const auto after = gaps(loss, size, size_target);
  const bool crossed = state_.pending.size() > 1 && after.loss > after.size;
  if (std::isfinite(out.objective) && out.objective <= state_.objective_before && !crossed) {
    out.kind = CutDecision::Kind::Kept;
    out.notices.push_back("late stage: kept the cut of " + where(state_.pending) + ": " + measured +
                          " is no worse than " + fixed(state_.objective_before) + " before it");
    state_.pending.clear();
    truncate_model(model, &optimizer, fold);
    return out;
  }
  out.kind = CutDecision::Kind::Restored;
  set_entries(model, state_.pending, true);
  if (!std::isfinite(out.objective)) {
    out.notices.push_back("late stage: restored " + where(state_.pending) +
                          ": training ended before the cut could be judged");
    state_.pending.clear();
    return out;
  }
  const double saved = exact_share(model, initial_size_) * initial_size_ - size * initial_size_;
  state_.settled = state_.pending.size() == 1;
  state_.cap = saved / 2;
  state_.skip_next = true;
  out.notices.push_back("late stage: restored " + where(state_.pending) + ": " + measured +
             (crossed ? " has the loss gap past the size gap, the balance overshot"
                      : " is worse than " + fixed(state_.objective_before) + " before the cut") + "; " +
             (state_.settled ? std::string("no further cuts (the objective is at a minimum along them)")
                             : "later cuts remove at most " + std::to_string(static_cast<int64_t>(state_.cap)) +
                                   " core entries"));
  state_.pending.clear();
  return out;
}

CutDecision LateCuts::decide(torch::nn::Module& model, torch::optim::Optimizer& optimizer, double size_target,
                             bool fold) {
  const double loss = take_window_loss();
  const double size = exact_share(model, initial_size_);
  CutDecision out;
  if (pending()) {
    out = judge(model, optimizer, loss, size, size_target, fold);
    if (out.kind == CutDecision::Kind::Restored) return out;
  }
  if (state_.settled) return out;
  if (state_.skip_next) {
    state_.skip_next = false;
    return out;
  }
  const auto& l = config_;
  const auto now = gaps(loss, size, size_target);
  if (!(now.size > now.loss)) return out;
  double budget = l.cut_fraction * (now.size - now.loss) / l.omega_size * initial_size_;
  // One cut stops at S0: past it the size gap no longer binds, and a loss gap far below zero
  // (a loose L0, or a small omega_size) would otherwise ask for the whole model at once.
  if (size > size_target) budget = std::min(budget, (size - size_target) * initial_size_);
  if (state_.cap > 0) budget = std::min(budget, state_.cap);
  auto all = candidates(model);
  std::stable_sort(all.begin(), all.end(), [](const Candidate& a, const Candidate& b) { return a.share < b.share; });
  std::vector<MaskedSlice> chosen;
  double saved = 0;
  for (const auto& c : all) {
    if (!chosen.empty() && saved + static_cast<double>(c.saved) > budget) break;
    chosen.push_back(c.slice);
    saved += static_cast<double>(c.saved);
  }
  if (chosen.empty()) return out;
  state_.objective_before = objective(loss, size, size_target);
  state_.pending = chosen;
  set_entries(model, chosen, false);
  out.kind = CutDecision::Kind::Masked;
  out.loss = loss;
  out.size = size;
  out.objective = state_.objective_before;
  out.slices = static_cast<int64_t>(chosen.size());
  out.notices.push_back("late stage: masked " + where(chosen) + " while the size gap binds: objective " +
                        fixed(out.objective) + " (L " + fixed(loss) + ", size " + fixed(size) +
                        " of the initial); kept if no worse after " + std::to_string(l.cut_every_steps) + " steps");
  return out;
}

CutDecision LateCuts::resolve(torch::nn::Module& model, torch::optim::Optimizer& optimizer, double size_target,
                              bool fold) {
  if (!pending()) return {};
  const double loss = take_window_loss();
  const double size = exact_share(model, initial_size_);
  return judge(model, optimizer, loss, size, size_target, fold);
}

}  // namespace comera
