#include "search/propose/history.h"

#include "core/util/error.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace comera::propose {

namespace {

double distance2(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += (a[i] - b[i]) * (a[i] - b[i]);
  return s;
}

}  // namespace

History read_history(const std::vector<Observation>& done) {
  History h;
  for (size_t i = 0; i < done.size(); ++i) {
    const auto& y = done[i].y;
    if (i == 0) h.objectives = y.size();
    if (y.size() != h.objectives || y.empty())
      throw Error("observation " + std::to_string(i) + " has " + std::to_string(y.size()) +
                  " objectives, observation 0 has " + std::to_string(h.objectives) +
                  " (give every observation the same objectives, NaN for a failed trial)");
    const bool finished = std::all_of(y.begin(), y.end(), [](double v) { return std::isfinite(v); });
    (finished ? h.finished : h.failed).push_back(i);
  }
  h.low.assign(h.objectives, std::numeric_limits<double>::infinity());
  pareto::Point high(h.objectives, -std::numeric_limits<double>::infinity());
  for (size_t i : h.finished)
    for (size_t j = 0; j < h.objectives; ++j)
      h.low[j] = std::min(h.low[j], done[i].y[j]), high[j] = std::max(high[j], done[i].y[j]);
  h.range.resize(h.objectives);
  for (size_t j = 0; j < h.objectives; ++j) h.range[j] = high[j] > h.low[j] ? high[j] - h.low[j] : 1;
  for (size_t i : h.finished) {
    pareto::Point s(h.objectives);
    for (size_t j = 0; j < h.objectives; ++j) s[j] = (done[i].y[j] - h.low[j]) / h.range[j];
    h.scaled.push_back(std::move(s));
  }
  return h;
}

Avoidance::Avoidance(const Space& space, const std::vector<Observation>& done, const History& history,
                     const std::vector<Values>& pending, double failed_radius)
    : failed_radius_(failed_radius) {
  for (const auto& o : done) taken_.push_back(encode(space, o.x));
  for (const auto& p : pending) taken_.push_back(encode(space, p));
  for (size_t i : history.failed) failed_.push_back(encode(space, done[i].x));
}

bool Avoidance::rejects(const std::vector<double>& encoded) const {
  for (const auto& t : taken_)
    if (distance2(t, encoded) < 1e-18) return true;
  for (const auto& f : failed_)
    if (distance2(f, encoded) < failed_radius_ * failed_radius_) return true;
  return false;
}

}  // namespace comera::propose
