#include "search/propose/hypervolume_improvement.h"

#include "core/util/error.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace comera::propose {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr size_t kNone = static_cast<size_t>(-1);

// E[(a - y)+] for y ~ N(mean, sd^2).
double psi(double a, double mean, double sd) {
  if (a == -kInf) return 0;
  if (!(sd > 0)) return std::max(0.0, a - mean);
  const double z = (a - mean) / sd;
  return (a - mean) * 0.5 * std::erfc(-z / std::sqrt(2.0)) + sd * std::exp(-0.5 * z * z) / std::sqrt(2 * M_PI);
}

}  // namespace

HypervolumeImprovement::HypervolumeImprovement(const std::vector<pareto::Point>& front, pareto::Point reference)
    : reference_(std::move(reference)) {
  const size_t dims = reference_.size();
  if (dims == 0) throw Error("expected hypervolume improvement: the reference point is empty (give one value per objective)");
  std::vector<pareto::Point> inside;
  std::vector<size_t> index;
  for (size_t i = 0; i < front.size(); ++i) {
    if (front[i].size() != dims)
      throw Error("expected hypervolume improvement: front point " + std::to_string(i) + " has " +
                  std::to_string(front[i].size()) + " objectives, the reference point " +
                  std::to_string(dims) + " (give every point the same objectives)");
    bool in = !pareto::has_nan(front[i]);
    for (size_t j = 0; in && j < dims; ++j) in = front[i][j] < reference_[j];
    if (in) inside.push_back(front[i]), index.push_back(i);
  }
  std::vector<pareto::Point> points;
  std::vector<size_t> owner_of;  // points[k] is front[owner_of[k]]
  for (size_t k : pareto::non_dominated(inside)) points.push_back(inside[k]), owner_of.push_back(index[k]);

  // Per objective: -inf, the distinct front values ascending, the reference; and for each grid
  // value the first front point that has it.
  std::vector<std::vector<size_t>> owner(dims);
  grid_.resize(dims);
  for (size_t j = 0; j < dims; ++j) {
    auto& g = grid_[j];
    g.push_back(-kInf);
    for (const auto& p : points) g.push_back(p[j]);
    std::sort(g.begin() + 1, g.end());
    g.erase(std::unique(g.begin(), g.end()), g.end());
    g.push_back(reference_[j]);
    owner[j].assign(g.size(), kNone);
    for (size_t k = points.size(); k-- > 0;)
      owner[j][std::lower_bound(g.begin(), g.end(), points[k][j]) - g.begin()] = owner_of[k];
  }

  // Every cell of the grid over the first dims-1 objectives, in mixed radix; its column along the
  // last objective is undominated below the lowest last value of the points that dominate the
  // cell's lower corner (the reference when none does).
  const size_t last = dims - 1;
  std::vector<size_t> cell(last, 0);
  for (;;) {
    Box box;
    box.lower.assign(dims, 0), box.upper.assign(dims, 0);
    size_t h_owner = kNone;
    double h = reference_[last];
    for (size_t k = 0; k < points.size(); ++k) {
      bool below = true;
      for (size_t j = 0; below && j < last; ++j) below = points[k][j] <= grid_[j][cell[j]];
      if (below && points[k][last] < h) h = points[k][last], h_owner = owner_of[k];
    }
    for (size_t j = 0; j < last; ++j) {
      box.lower[j] = cell[j], box.upper[j] = cell[j] + 1;
      for (size_t at : {box.lower[j], box.upper[j]})
        if (owner[j][at] != kNone) box.bounds.push_back(owner[j][at]);
    }
    box.upper[last] = static_cast<size_t>(std::lower_bound(grid_[last].begin(), grid_[last].end(), h) -
                                          grid_[last].begin());
    if (h_owner != kNone) box.bounds.push_back(h_owner);
    std::sort(box.bounds.begin(), box.bounds.end());
    box.bounds.erase(std::unique(box.bounds.begin(), box.bounds.end()), box.bounds.end());
    boxes_.push_back(std::move(box));
    size_t j = 0;
    while (j < last && ++cell[j] == grid_[j].size() - 1) cell[j++] = 0;
    if (j == last) break;
  }
}

std::vector<std::vector<double>> HypervolumeImprovement::psi(const pareto::Point& mean,
                                                             const pareto::Point& sd) const {
  if (mean.size() != reference_.size() || sd.size() != reference_.size())
    throw Error("expected hypervolume improvement: " + std::to_string(mean.size()) + " means and " +
                std::to_string(sd.size()) + " standard deviations for " + std::to_string(reference_.size()) +
                " objectives (give one of each per objective)");
  std::vector<std::vector<double>> out(grid_.size());
  for (size_t j = 0; j < grid_.size(); ++j)
    for (double a : grid_[j]) out[j].push_back(propose::psi(a, mean[j], sd[j]));
  return out;
}

double HypervolumeImprovement::box_gain(const Box& box, const std::vector<std::vector<double>>& psi) const {
  double gain = 1;
  for (size_t j = 0; j < grid_.size(); ++j) gain *= std::max(0.0, psi[j][box.upper[j]] - psi[j][box.lower[j]]);
  return gain;
}

double HypervolumeImprovement::expected(const pareto::Point& mean, const pareto::Point& sd) const {
  const auto p = psi(mean, sd);
  double total = 0;
  for (const auto& box : boxes_) total += box_gain(box, p);
  return total;
}

std::vector<size_t> HypervolumeImprovement::best_box_bounds(const pareto::Point& mean,
                                                            const pareto::Point& sd) const {
  const auto p = psi(mean, sd);
  const Box* best = &boxes_[0];
  double most = -1;
  for (const auto& box : boxes_) {
    const double gain = box_gain(box, p);
    if (gain > most) most = gain, best = &box;
  }
  return best->bounds;
}

}  // namespace comera::propose
