#include "search/propose/gp_ehvi.h"

#include "core/util/random.h"
#include "search/propose/gaussian_process.h"
#include "search/propose/hypervolume_improvement.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace comera::propose {

namespace {

// Local search from the best candidates: the acquisition is multimodal and flat away from the
// front, so a broad random screen finds the basins and a shrinking hill climb finishes each.
constexpr size_t kRefined = 5;
constexpr int kRefineSteps = 40;

struct Scored {
  std::vector<double> encoded;
  double gain = -1;
};

// `base` moved by a Gaussian step of `sd` on some of its axes (each with probability about
// 2 / axes, at least one), a choice re-drawn instead of moved; then rounded to the space.
std::vector<double> perturb(const Space& space, const std::vector<double>& base, double sd, Rng& rng) {
  auto out = base;
  const double p = std::min(1.0, 2.0 / static_cast<double>(space.size()));
  const size_t forced = rng.below(space.size());
  size_t at = 0;
  for (size_t a = 0; a < space.size(); ++a) {
    const bool move = a == forced || rng.uniform() < p;
    if (space[a].kind != AxisKind::Choice) {
      if (move) out[at] = std::clamp(out[at] + sd * rng.normal(), 0.0, 1.0);
      ++at;
      continue;
    }
    const auto k = static_cast<size_t>(space[a].choices);
    if (move) {
      const size_t pick = rng.below(k);
      for (size_t c = 0; c < k; ++c) out[at + c] = c == pick ? 1 : 0;
    }
    at += k;
  }
  return encode(space, decode(space, out));
}

// Trained stages in the encoded cube: which coordinates belong to late axes, and which stage a
// candidate keeps on all the others.
class Stages {
 public:
  Stages(const Space& space, const ProposerOptions& o) : trained_(o.trained) {
    for (size_t a = 0; a < space.size(); ++a) {
      const bool late = a < o.late_axes.size() && o.late_axes[a];
      const size_t width = space[a].kind == AxisKind::Choice ? static_cast<size_t>(space[a].choices) : 1;
      late_.insert(late_.end(), width, late);
    }
    // Without a late axis a stage's only point is its own trial's: nothing to draw.
    if (std::find(late_.begin(), late_.end(), true) == late_.end()) trained_.clear();
    for (const auto& t : trained_) points_.push_back(encode(space, t.x));
  }
  bool empty() const { return points_.empty(); }
  // The stage `e` keeps on every coordinate but the late ones; -1: none.
  int match(const std::vector<double>& e) const {
    for (size_t s = 0; s < points_.size(); ++s) {
      bool same = true;
      for (size_t c = 0; c < e.size() && same; ++c) same = late_[c] || std::abs(e[c] - points_[s][c]) < 1e-9;
      if (same) return static_cast<int>(s);
    }
    return -1;
  }
  double cost(int s) const { return s < 0 ? 1.0 : trained_[static_cast<size_t>(s)].cost; }
  const TrainedStage& at(int s) const { return trained_[static_cast<size_t>(s)]; }
  // `e` with every coordinate but the late ones taken from stage `s`.
  std::vector<double> pin(std::vector<double> e, size_t s) const {
    for (size_t c = 0; c < e.size(); ++c)
      if (!late_[c]) e[c] = points_[s][c];
    return e;
  }
  size_t size() const { return points_.size(); }

 private:
  std::vector<TrainedStage> trained_;
  std::vector<std::vector<double>> points_;
  std::vector<bool> late_;
};

// "front points 3 and 7", "trial 4 and pending point 0": bounds index the observations (named
// by their names where they have them), then the pending points.
std::string point_names(const std::vector<size_t>& bounds, const std::vector<Observation>& done) {
  std::vector<std::string> names;
  for (const bool pending : {false, true}) {
    std::vector<size_t> ids;
    for (size_t b : bounds)
      if ((b >= done.size()) == pending) ids.push_back(pending ? b - done.size() : b);
    if (ids.empty()) continue;
    const bool named = !pending && std::all_of(ids.begin(), ids.end(), [&](size_t i) { return !done[i].name.empty(); });
    std::string text = named ? "" : std::string(pending ? "pending point" : "front point") + (ids.size() > 1 ? "s " : " ");
    for (size_t i = 0; i < ids.size(); ++i)
      text += (i == 0 ? "" : i + 1 == ids.size() ? " and " : ", ") + (named ? done[ids[i]].name : std::to_string(ids[i]));
    names.push_back(text);
  }
  return names.size() == 1 ? names[0] : names[0] + " and " + names[1];
}

}  // namespace

Proposal propose_gp_ehvi(const Space& space, const std::vector<Observation>& done, const History& history,
                         const std::vector<Values>& pending, const ProposerOptions& options, uint64_t seed) {
  const size_t m = history.objectives;
  std::vector<std::vector<double>> x;
  for (size_t i : history.finished) x.push_back(encode(space, done[i].x));
  std::vector<GaussianProcess> models;
  for (size_t j = 0; j < m; ++j) {
    std::vector<double> y;
    for (const auto& s : history.scaled) y.push_back(s[j]);
    models.push_back(GaussianProcess::fit(x, y, seed + j));
  }

  // The front in the scaled box, indexed like `done` so its box bounds name observations;
  // pending points join it (and the models) at their predicted means, indexed past `done`.
  std::vector<pareto::Point> front(done.size(), pareto::Point(m, std::nan("")));
  for (size_t k = 0; k < history.finished.size(); ++k) front[history.finished[k]] = history.scaled[k];
  for (const auto& p : pending) {
    const auto e = encode(space, p);
    pareto::Point believed(m);
    for (size_t j = 0; j < m; ++j) believed[j] = models[j].predict(e).mean;
    for (size_t j = 0; j < m; ++j) models[j] = models[j].with(e, believed[j]);
    front.push_back(believed);
  }
  const HypervolumeImprovement improvement(front, pareto::Point(m, kScaledReference));
  const Avoidance avoid(space, done, history, pending);

  auto predict = [&](const std::vector<double>& e, pareto::Point& mean, pareto::Point& sd) {
    mean.resize(m), sd.resize(m);
    for (size_t j = 0; j < m; ++j) {
      const auto p = models[j].predict(e);
      mean[j] = p.mean, sd[j] = std::sqrt(p.variance);
    }
  };
  // Ranked by expected gain per cost: a candidate on a trained stage runs only its late stage.
  const Stages stages(space, options);
  pareto::Point mean, sd;
  auto score = [&](std::vector<double> e) {
    Scored s{std::move(e), -1};
    if (avoid.rejects(s.encoded)) return s;
    predict(s.encoded, mean, sd);
    s.gain = improvement.expected(mean, sd) / stages.cost(stages.match(s.encoded));
    return s;
  };

  // Half the candidates uniform over the space, half near the front's points at three scales;
  // with trained stages, a third on them, their late axes drawn anew.
  Rng rng(seed);
  std::vector<std::vector<double>> bases;
  for (size_t i : pareto::non_dominated(history.scaled)) bases.push_back(x[i]);
  const double scales[] = {0.02, 0.08, 0.25};
  std::vector<Scored> scored;
  for (int64_t c = 0; c < options.candidates; ++c) {
    if (!stages.empty() && c % 3 == 2) {
      const auto drawn = encode(space, random_values(space, rng));
      scored.push_back(score(stages.pin(drawn, rng.below(stages.size()))));
      continue;
    }
    if (c % 2 == 0) {
      scored.push_back(score(encode(space, random_values(space, rng))));
      continue;
    }
    const auto& base = bases[rng.below(bases.size())];
    scored.push_back(score(perturb(space, base, scales[rng.below(3)], rng)));
  }
  std::stable_sort(scored.begin(), scored.end(), [](const Scored& a, const Scored& b) { return a.gain > b.gain; });
  const size_t refined = std::min(kRefined, scored.size());
  for (size_t r = 0; r < refined && scored[r].gain >= 0; ++r) {
    // A candidate on a trained stage is refined on it.
    const int stage = stages.match(scored[r].encoded);
    double step = 0.1;
    for (int t = 0; t < kRefineSteps; ++t, step *= 0.9) {
      auto moved = perturb(space, scored[r].encoded, step, rng);
      if (stage >= 0) moved = stages.pin(std::move(moved), static_cast<size_t>(stage));
      auto next = score(std::move(moved));
      if (next.gain > scored[r].gain) scored[r] = std::move(next);
    }
  }
  const auto best = std::max_element(scored.begin(), scored.begin() + static_cast<std::ptrdiff_t>(refined),
                                     [](const Scored& a, const Scored& b) { return a.gain < b.gain; });

  Proposal out;
  if (best->gain < 0) {
    // Every candidate repeats a trial: a small discrete space that is fully explored.
    out.x = decode(space, scored[0].encoded);
    out.method = "random";
    out.reason = "every candidate repeats a trial or sits on a failed one; proposing one of them anyway";
    return out;
  }
  out.method = "gp-ehvi";
  out.x = decode(space, best->encoded);
  const int stage = stages.match(best->encoded);
  out.expected_gain = best->gain * stages.cost(stage);
  predict(best->encoded, mean, sd);
  for (size_t j = 0; j < m; ++j) out.predicted.push_back(history.low[j] + history.range[j] * mean[j]);
  const auto bounds = improvement.best_box_bounds(mean, sd);
  for (size_t b : bounds)
    if (b < done.size()) out.between.push_back(b);
  char gain[48];
  std::snprintf(gain, sizeof gain, "expected HV gain %.3g", best->gain);
  // A non-empty front gives every box at least one bounding point.
  if (bounds.size() == 1)
    out.reason = "extends the front past its end at " + point_names(bounds, done) + " (" + gain + ")";
  else
    out.reason = "fills the gap between " + point_names(bounds, done) + " (" + gain + ")";
  if (stage >= 0) {
    std::snprintf(gain, sizeof gain, "%.3g", stages.cost(stage));
    out.reason += ", from " + stages.at(stage).name + "'s trained early stage (costs " + gain + " of a trial)";
  }
  return out;
}

}  // namespace comera::propose
