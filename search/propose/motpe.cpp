#include "search/propose/motpe.h"

#include "core/util/random.h"
#include "search/pareto/hypervolume.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace comera::propose {

namespace {

constexpr int64_t kCandidates = 24;   // Optuna's n_ei_candidates
constexpr double kPriorWeight = 1.0;  // Optuna's prior_weight

// Optuna's default gamma: the good group is the best 10% of the finished trials, at most 25.
size_t good_count(size_t finished) {
  return std::clamp<size_t>(static_cast<size_t>(std::ceil(0.1 * static_cast<double>(finished))), 1, 25);
}

double normal_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

// A point in the estimator's coordinates: a numeric axis's unit position, a choice's index.
using Coordinates = std::vector<double>;

Coordinates coordinates(const Space& space, const Values& v) {
  Coordinates out(space.size());
  for (size_t a = 0; a < space.size(); ++a)
    out[a] = space[a].kind == AxisKind::Choice ? v[a] : to_unit(space[a], v[a]);
  return out;
}

Values values(const Space& space, const Coordinates& c) {
  Values out(space.size());
  for (size_t a = 0; a < space.size(); ++a)
    out[a] = space[a].kind == AxisKind::Choice ? c[a] : from_unit(space[a], c[a]);
  return out;
}

// A weighted mixture with one component per trial plus a prior, a product over axes (Optuna's
// multivariate TPE): a Gaussian truncated to the axis's range on numeric axes (the range widened
// by half a step on integer axes, so the end values are not half as likely), a categorical on
// choice axes.
class ParzenEstimator {
 public:
  ParzenEstimator(const Space& space, const std::vector<Coordinates>& points, std::vector<double> weights)
      : space_(space), points_(points) {
    const double n = static_cast<double>(points.size());
    weights.push_back(kPriorWeight);
    double total = 0;
    for (double w : weights) total += w;
    for (double w : weights) log_weights_.push_back(std::log(std::max(w / total, 1e-300)));
    for (const auto& axis : space) {
      double lo = 0, hi = 1;
      if (axis.kind == AxisKind::Integer)
        lo = to_unit(axis, axis.min - 0.5), hi = to_unit(axis, axis.max + 0.5);  // log: min >= 1
      lo_.push_back(lo), hi_.push_back(hi);
      // Optuna's multivariate bandwidth (0.2 n^(-1/(d+4)) of the range), no narrower than the
      // range over min(100, n + 1).
      const double width = hi - lo;
      const double sigma = 0.2 * std::pow(std::max(n, 1.0), -1.0 / (static_cast<double>(space.size()) + 4)) * width;
      sigma_.push_back(std::clamp(sigma, width / std::min(100.0, n + 1), width));
    }
  }

  size_t components() const { return log_weights_.size(); }
  bool is_prior(size_t component) const { return component == points_.size(); }

  Coordinates sample(Rng& rng, size_t& component) const {
    double u = rng.uniform();
    component = components() - 1;
    for (size_t c = 0; c + 1 < components(); ++c) {
      u -= std::exp(log_weights_[c]);
      if (u < 0) {
        component = c;
        break;
      }
    }
    Coordinates out(space_.size());
    for (size_t a = 0; a < space_.size(); ++a) {
      if (space_[a].kind == AxisKind::Choice) {
        double v = rng.uniform();
        const auto k = space_[a].choices;
        out[a] = static_cast<double>(k - 1);
        for (int64_t c = 0; c < k; ++c)
          if ((v -= std::exp(log_choice(a, component, static_cast<double>(c)))) < 0) {
            out[a] = static_cast<double>(c);
            break;
          }
        continue;
      }
      const double mu = centre(a, component), sigma = width(a, component);
      double z = mu;
      for (int tries = 0; tries < 100; ++tries) {
        z = mu + sigma * rng.normal();
        if (z >= lo_[a] && z <= hi_[a]) break;
      }
      out[a] = std::clamp(z, lo_[a], hi_[a]);
    }
    return out;
  }

  double log_density(const Coordinates& x) const {
    double most = -std::numeric_limits<double>::infinity();
    std::vector<double> terms(components());
    for (size_t c = 0; c < components(); ++c) {
      double t = log_weights_[c];
      for (size_t a = 0; a < space_.size(); ++a) {
        if (space_[a].kind == AxisKind::Choice) {
          t += log_choice(a, c, x[a]);
          continue;
        }
        const double mu = centre(a, c), sigma = width(a, c), z = (x[a] - mu) / sigma;
        const double mass = normal_cdf((hi_[a] - mu) / sigma) - normal_cdf((lo_[a] - mu) / sigma);
        t += -0.5 * z * z - std::log(sigma * std::sqrt(2 * M_PI) * std::max(mass, 1e-300));
      }
      terms[c] = t;
      most = std::max(most, t);
    }
    double sum = 0;
    for (double t : terms) sum += std::exp(t - most);
    return most + std::log(sum);
  }

 private:
  double centre(size_t a, size_t c) const { return is_prior(c) ? (lo_[a] + hi_[a]) / 2 : points_[c][a]; }
  double width(size_t a, size_t c) const { return is_prior(c) ? hi_[a] - lo_[a] : sigma_[a]; }
  // Optuna's categorical kernel: the trial's choice plus prior_weight / (n + 1) on every choice.
  double log_choice(size_t a, size_t c, double choice) const {
    const double k = static_cast<double>(space_[a].choices);
    if (is_prior(c)) return -std::log(k);
    const double smooth = kPriorWeight / (static_cast<double>(points_.size()) + 1);
    return std::log(((points_[c][a] == choice ? 1 : 0) + smooth) / (1 + k * smooth));
  }

  const Space& space_;
  std::vector<Coordinates> points_;
  std::vector<double> log_weights_, lo_, hi_, sigma_;
};

// Indices (into `scaled`) of the good group: whole non-dominated ranks while they fit, then
// from the first rank that does not fit, greedily the points that add most hypervolume.
std::vector<size_t> good_group(const std::vector<pareto::Point>& scaled, size_t count) {
  const pareto::Point reference(scaled[0].size(), kScaledReference);
  std::vector<size_t> rest(scaled.size()), good;
  for (size_t i = 0; i < rest.size(); ++i) rest[i] = i;
  while (good.size() < count) {
    std::vector<pareto::Point> points;
    for (size_t i : rest) points.push_back(scaled[i]);
    std::vector<size_t> rank;
    for (size_t k : pareto::non_dominated(points)) rank.push_back(rest[k]);
    if (good.size() + rank.size() <= count) {
      good.insert(good.end(), rank.begin(), rank.end());
      std::vector<size_t> left;
      for (size_t i : rest)
        if (std::find(rank.begin(), rank.end(), i) == rank.end()) left.push_back(i);
      rest = std::move(left);
      continue;
    }
    std::vector<pareto::Point> chosen;
    while (good.size() < count) {
      size_t pick = 0;
      double most = -1;
      for (size_t k = 0; k < rank.size(); ++k) {
        auto with = chosen;
        with.push_back(scaled[rank[k]]);
        const double hv = pareto::hypervolume(with, reference);
        if (hv > most) most = hv, pick = k;
      }
      chosen.push_back(scaled[rank[pick]]);
      good.push_back(rank[pick]);
      rank.erase(rank.begin() + static_cast<std::ptrdiff_t>(pick));
    }
  }
  return good;
}

// Each good trial's weight: its share of the group's hypervolume, relative to the largest (a
// dominated member adds none and all but drops out), as Optuna weighs multi-objective trials.
std::vector<double> good_weights(const std::vector<pareto::Point>& points) {
  if (points.size() == 1) return {1.0};
  const pareto::Point reference(points[0].size(), kScaledReference);
  const double whole = pareto::hypervolume(points, reference);
  std::vector<double> out;
  for (size_t i = 0; i < points.size(); ++i) {
    auto without = points;
    without.erase(without.begin() + static_cast<std::ptrdiff_t>(i));
    out.push_back(whole - pareto::hypervolume(without, reference));
  }
  const double most = *std::max_element(out.begin(), out.end());
  for (auto& w : out) w = most > 0 ? std::max(w / most, 1e-12) : 1;
  return out;
}

}  // namespace

Proposal propose_motpe(const Space& space, const std::vector<Observation>& done, const History& history,
                       const std::vector<Values>& pending, uint64_t seed) {
  const auto good = good_group(history.scaled, good_count(history.finished.size()));
  std::vector<Coordinates> good_points, other_points;
  std::vector<pareto::Point> good_scaled;
  std::vector<size_t> good_trials;
  for (size_t k : good) {
    good_points.push_back(coordinates(space, done[history.finished[k]].x));
    good_scaled.push_back(history.scaled[k]);
    good_trials.push_back(history.finished[k]);
  }
  for (size_t k = 0; k < history.finished.size(); ++k)
    if (std::find(good.begin(), good.end(), k) == good.end())
      other_points.push_back(coordinates(space, done[history.finished[k]].x));
  for (size_t i : history.failed) other_points.push_back(coordinates(space, done[i].x));
  for (const auto& p : pending) other_points.push_back(coordinates(space, p));
  const ParzenEstimator l(space, good_points, good_weights(good_scaled));
  const ParzenEstimator g(space, other_points, std::vector<double>(other_points.size(), 1.0));
  const Avoidance avoid(space, done, history, pending);

  Rng rng(seed);
  double best_ratio = -std::numeric_limits<double>::infinity();
  Values best;
  size_t best_component = 0;
  int64_t drawn = 0;
  // More rounds only when every draw repeats a trial (a small, well explored discrete space).
  for (int round = 0; round < 10 && best.empty(); ++round)
    for (int64_t c = 0; c < kCandidates; ++c, ++drawn) {
      size_t component = 0;
      const auto x = values(space, l.sample(rng, component));
      if (avoid.rejects(encode(space, x))) continue;
      const auto z = coordinates(space, x);
      const double ratio = l.log_density(z) - g.log_density(z);
      if (ratio > best_ratio) best_ratio = ratio, best = x, best_component = component;
    }

  Proposal out;
  if (best.empty()) {
    out.x = random_values(space, rng);
    out.method = "random";
    out.reason = "every draw from the good trials' density repeats a trial; a random point instead";
    return out;
  }
  out.x = best;
  out.method = "motpe";
  char ratio[96];
  std::snprintf(ratio, sizeof ratio, "l/g %.3g, the best of %lld draws from the density of the %zu best trials",
                std::exp(best_ratio), static_cast<long long>(drawn), good.size());
  if (l.is_prior(best_component)) {
    out.reason = std::string("drawn from the broad prior (") + ratio + ")";
  } else {
    out.between = {good_trials[best_component]};
    const auto& near = done[good_trials[best_component]];
    out.reason = "drawn near " + (near.name.empty() ? "trial " + std::to_string(good_trials[best_component]) : near.name) +
                 " (" + ratio + ")";
  }
  return out;
}

}  // namespace comera::propose
