// Pareto sets against a brute-force pairwise check, and hypervolumes of hand-made fronts and
// against inclusion-exclusion over the dominated boxes.
#include "core/util/error.h"
#include "core/util/random.h"
#include "search/pareto/hypervolume.h"
#include "search/pareto/pareto_set.h"
#include "tests/support/catch.h"

#include <cmath>
#include <limits>

using namespace comera;
using namespace comera::pareto;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

// Point i is on the front iff it has no NaN and no NaN-free point is <= everywhere and < once.
std::vector<size_t> brute_force_front(const std::vector<Point>& points) {
  auto nan_free = [](const Point& p) {
    for (double x : p)
      if (x != x) return false;
    return true;
  };
  std::vector<size_t> front;
  for (size_t i = 0; i < points.size(); ++i) {
    if (!nan_free(points[i])) continue;
    bool dominated = false;
    for (size_t j = 0; j < points.size() && !dominated; ++j) {
      if (!nan_free(points[j])) continue;
      bool all_le = true, some_lt = false;
      for (size_t k = 0; k < points[i].size(); ++k) {
        all_le = all_le && points[j][k] <= points[i][k];
        some_lt = some_lt || points[j][k] < points[i][k];
      }
      dominated = all_le && some_lt;
    }
    if (!dominated) front.push_back(i);
  }
  return front;
}

// Union volume of the boxes [p, reference] by inclusion-exclusion (small sets only).
double inclusion_exclusion(const std::vector<Point>& points, const Point& reference) {
  const size_t n = points.size();
  double total = 0;
  for (uint64_t mask = 1; mask < (uint64_t{1} << n); ++mask) {
    Point corner(reference.size(), -std::numeric_limits<double>::infinity());
    int count = 0;
    for (size_t i = 0; i < n; ++i)
      if (mask >> i & 1) {
        ++count;
        for (size_t k = 0; k < corner.size(); ++k) corner[k] = std::max(corner[k], points[i][k]);
      }
    double box = 1;
    for (size_t k = 0; k < corner.size(); ++k) box *= std::max(0.0, reference[k] - corner[k]);
    total += count % 2 ? box : -box;
  }
  return total;
}

}  // namespace

TEST_CASE("Pareto set equals a brute-force check on random points with ties and NaN", "[pareto]") {
  Rng rng(7);
  for (int round = 0; round < 300; ++round) {
    const size_t n = 1 + rng.below(40), dims = 1 + rng.below(4);
    // Coordinates from a few integer levels make ties and duplicate points common.
    const uint64_t levels = 2 + rng.below(6);
    std::vector<Point> points(n, Point(dims));
    for (auto& p : points)
      for (auto& x : p) x = rng.below(20) == 0 ? kNaN : static_cast<double>(rng.below(levels));
    INFO("round " << round << ", " << n << " points in " << dims << " objectives");
    CHECK(non_dominated(points) == brute_force_front(points));
  }
}

TEST_CASE("Pareto set keeps ties and drops NaN and dominated points", "[pareto]") {
  const std::vector<Point> points = {
      {1, 5}, {1, 5}, {2, 2}, {2, 3}, {kNaN, 0}, {5, 1}, {5, kNaN}, {6, 1}};
  CHECK(non_dominated(points) == std::vector<size_t>{0, 1, 2, 5});
  CHECK(dominates({1, 1}, {1, 2}));
  CHECK_FALSE(dominates({1, 2}, {1, 2}));
  CHECK_FALSE(dominates({0, kNaN}, {1, 2}));
  CHECK(non_dominated({}).empty());
  CHECK(non_dominated({{kNaN}}).empty());
  CHECK_THROWS_WITH(non_dominated({{1, 2}, {1}}), Catch::Matchers::Contains("point 1 has 1"));
}

TEST_CASE("hypervolume of hand-made fronts", "[pareto]") {
  // Staircase (1,3), (2,2), (3,1) under (4,4): columns of heights 1, 2 and 3.
  const std::vector<Point> stairs = {{1, 3}, {2, 2}, {3, 1}};
  CHECK(hypervolume(stairs, {4, 4}) == Approx(6));
  // A dominated point, a duplicate, a NaN and points outside the reference box add nothing.
  auto noisy = stairs;
  noisy.insert(noisy.end(), {{2.5, 2.5}, {2, 2}, {kNaN, 0}, {5, 0}, {0, 4}});
  CHECK(hypervolume(noisy, {4, 4}) == Approx(6));
  CHECK(hypervolume({}, {4, 4}) == 0);
  CHECK(hypervolume({{1}, {3}}, {5}) == Approx(4));
  // One box in 3-D, then two boxes 2x2x1 and 1x1x2 overlapping in a unit cube.
  CHECK(hypervolume({{0, 0, 0}}, {1, 2, 3}) == Approx(6));
  CHECK(hypervolume({{0, 0, 1}, {1, 1, 0}}, {2, 2, 2}) == Approx(5));
  // Three corners of a 2-cube one step in: boxes of 2x1x1, pairwise and triple overlaps a unit cube.
  CHECK(hypervolume({{0, 1, 1}, {1, 0, 1}, {1, 1, 0}}, {2, 2, 2}) == Approx(3 * 2 - 3 * 1 + 1));
  CHECK_THROWS_WITH(hypervolume({{1, 2}}, {3}), Catch::Matchers::Contains("reference point has 1"));
}

TEST_CASE("hypervolume equals inclusion-exclusion on random sets", "[pareto]") {
  Rng rng(11);
  for (int round = 0; round < 100; ++round) {
    const size_t n = 1 + rng.below(8), dims = 1 + rng.below(4);
    std::vector<Point> points(n, Point(dims));
    for (auto& p : points)
      for (auto& x : p) x = static_cast<double>(rng.below(1000)) / 100;
    const Point reference(dims, 9);
    INFO("round " << round);
    CHECK(hypervolume(points, reference) == Approx(inclusion_exclusion(points, reference)));
  }
}

TEST_CASE("default reference point pads the worst finite value", "[pareto]") {
  const std::vector<Point> points = {{1, 10}, {3, 10}, {kNaN, 50}, {2, kNaN}};
  const Point reference = default_reference(points, 0.1);
  CHECK(reference[0] == Approx(3.2));   // worst 3, range 2
  CHECK(reference[1] == Approx(54));    // worst 50, range 40
  CHECK(default_reference({{0}, {0}})[0] == Approx(0.1));
  CHECK(default_reference({{-5}})[0] == Approx(-4.5));
  CHECK_THROWS_WITH(default_reference({{kNaN, 1}}), Catch::Matchers::Contains("objective 0"));
}
