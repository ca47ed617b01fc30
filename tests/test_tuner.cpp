// The tuner: decision rule, key bucketing, candidate set, and persistence of choices in the
// results database (written, read back, ignored under another environment fingerprint).
#include "core/contract/tt_network.h"
#include "core/layers/tt_linear.h"
#include "search/environment.h"
#include "search/store/kernel_choices.h"
#include "search/store/results_db.h"
#include "search/tuner/candidates.h"
#include "search/tuner/tuner.h"
#include "search/tuner/tuning_key.h"
#include "tests/support/catch.h"
#include "tests/support/temp_dir.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <algorithm>

using namespace comera;
using namespace comera::tuner;
using Catch::Matchers::Contains;

namespace {

Candidate named(const std::string& name, bool reference = false) {
  Candidate c;
  c.name = c.text = name;
  c.reference = reference;
  return c;
}

// Timed runs (in rounds shared with the other candidates); the median as measure() takes it.
Measurement timed(std::vector<double> runs) {
  Measurement m;
  m.runs_ms = runs;
  std::sort(runs.begin(), runs.end());
  m.total_ms = runs[runs.size() / 2];
  m.repeats = static_cast<int>(runs.size());
  return m;
}

Measurement timed(double ms) { return timed({ms, ms, ms, ms, ms}); }

// A quick tuner: tiny budget, few candidates.
TunerOptions quick() {
  TunerOptions o;
  o.candidates.top_k = 2;
  o.candidates.mixed = 1;
  o.measure.budget_ms = 1;
  o.measure.min_repeats = 1;
  o.measure.max_repeats = 1;
  return o;
}

}  // namespace

TEST_CASE("the tuner keeps the merged path unless a plan beats it by the margin", "[tuner]") {
  const std::vector<Candidate> cs{named(kMerged), named("ranked"), named("core-by-core"),
                                  named(kDense, true)};
  int fastest = -1;
  CHECK(decide(cs, {timed(10), timed(9.8), timed(12), timed(1)}, 0.03, &fastest) == 0);
  CHECK(fastest == 1);  // dense is faster still, but only a reference
  CHECK(decide(cs, {timed(10), timed(9.6), timed(12), timed(1)}, 0.03) == 1);
  CHECK(decide(cs, {timed(10), timed(11), timed(9), timed(1)}, 0.03, &fastest) == 2);
  CHECK(fastest == 2);
  Measurement skipped;  // a candidate that was not run is never chosen
  CHECK(decide(cs, {timed(10), skipped, timed(12), timed(1)}, 0.03) == 0);
  // Faster by the median, but in only 4 of 5 shared rounds (sign test p = 6/32): noise, the
  // merged path stays; 5 of 5 (p = 1/32) is a win.
  const Measurement merged = timed(10);
  CHECK(decide(cs, {merged, timed({5, 5, 20, 5, 5}), timed(12), timed(1)}, 0.03, &fastest) == 0);
  CHECK(fastest == 1);
  CHECK(decide(cs, {merged, timed({5, 5, 9, 5, 5}), timed(12), timed(1)}, 0.03) == 1);
  // 3 rounds can never show it; 15 of 20 rounds (p = 0.021) can.
  CHECK(decide(cs, {timed({10, 10, 10}), timed({5, 5, 5}), timed(12), timed(1)}, 0.03) == 0);
  std::vector<double> twenty(20, 10.0), mostly(20, 9.0);
  for (int i = 0; i < 5; ++i) mostly[i] = 11;
  CHECK(decide(cs, {timed(twenty), timed(mostly), timed(12), timed(1)}, 0.03) == 1);
  for (int i = 5; i < 7; ++i) mostly[i] = 11;  // 13 of 20: p = 0.13
  CHECK(decide(cs, {timed(twenty), timed(mostly), timed(12), timed(1)}, 0.03) == 0);
}

TEST_CASE("the tuner takes the fastest of the plans that beat the merged path", "[tuner]") {
  const std::vector<Candidate> cs{named(kMerged), named("a"), named("b"), named(kDense, true)};
  int fastest = -1;
  // a is the fastest by median but faster than the merged path in only 4 of 5 rounds.
  CHECK(decide(cs, {timed(10), timed({5, 5, 20, 5, 5}), timed(8), timed(1)}, 0.03, &fastest) == 2);
  CHECK(fastest == 1);
  CHECK(decide(cs, {timed(10), timed({5, 5, 9, 5, 5}), timed(8), timed(1)}, 0.03) == 1);
}

TEST_CASE("token counts fall into power-of-two buckets", "[tuner]") {
  CHECK(token_bucket(1) == 1);
  CHECK(token_bucket(3) == 4);
  CHECK(token_bucket(2500) == 2048);
  CHECK(token_bucket(3000) == 4096);
  CHECK(token_bucket(4096) == 4096);
  CHECK(token_bucket(16384) == 16384);
}

TEST_CASE("candidates hold the three named paths, ranked plans and dense", "[tuner]") {
  const TTShape shape = TTShape::uniform({12, 8, 8}, {8, 8, 12}, 30);
  CandidateOptions o;
  o.top_k = 3;
  const auto cs = make_candidates(shape, 32, o);
  std::vector<std::string> names, texts;
  for (const auto& c : cs) names.push_back(c.name), texts.push_back(c.text);
  for (const char* n : {"merged", "core-by-core", "reconstruct", "ranked", "mixed", "dense"})
    CHECK(std::count(names.begin(), names.end(), n) >= 1);
  auto sorted = texts;
  std::sort(sorted.begin(), sorted.end());
  CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());  // no duplicates
  for (const auto& c : cs) CHECK((c.plan == nullptr) == (c.name == kMerged || c.name == kDense));
  // The merged path's forward at B = 32: 2 (34,560 + 691,200) merges + 32 * 46,080, times 3.
  const auto merged = std::find_if(cs.begin(), cs.end(), [](const Candidate& c) { return c.name == kMerged; });
  CHECK(merged->cost.macs == 3 * (2 * (34560 + 691200) + 32 * 46080.0));
  // A stored plan text parses back to the same plan.
  const auto ranked = std::find_if(cs.begin(), cs.end(), [](const Candidate& c) { return c.name == "ranked"; });
  const contract::TTNetwork tt(shape, 32);
  CHECK(plan_from_choice(ranked->text, 3)->str(tt.net()) == ranked->text);
  CHECK(plan_from_choice("merged", 3) == nullptr);
}

TEST_CASE("choices are stored, read back, and ignored under another fingerprint", "[tuner]") {
  comera::testing::TempDir dir;
  auto db = store::ResultsDb::open(dir.file("tune.db"));
  const TTShape shape({2, 3}, {3, 2}, {1, 2, 3, 2, 1});
  Environment env = current_environment();

  Tuner first(quick(), &db, env);
  at::manual_seed(5);
  const at::Tensor before = at::rand({4});
  at::manual_seed(5);
  const Choice measured = first.choose(shape, 20, at::kFloat);
  CHECK(at::equal(at::rand({4}), before));  // measuring leaves the caller's random stream alone
  CHECK_FALSE(measured.stored);
  const auto row = store::get_kernel_choice(db, kernel_key(shape, 20, at::kFloat, env), env.fingerprint());
  REQUIRE(row);
  CHECK(row->choice == measured.text);
  CHECK(row->key.token_bucket == 16);
  CHECK(row->repeats >= 1);

  // A stored plan other than the merged path, then read back by a tuner that never measures.
  const std::string plan = "((((X,G1),G2),G3),G4)";
  store::put_kernel_choice(db, {kernel_key(shape, 16, at::kFloat, env), env.fingerprint(), plan, 0.5, 7,
                                env.git_commit, ""});
  TunerOptions cached = quick();
  cached.measure_missing = false;
  Tuner second(cached, &db, env);
  const Choice read = second.choose(shape, 17, at::kFloat);  // same bucket
  CHECK(read.stored);
  CHECK(read.text == plan);
  REQUIRE(read.plan);

  // Same key, other machine or library: ignored, so the default (merged path) stays.
  Environment other = env;
  other.threads = env.threads + 1;
  other.device = "another cpu";
  Tuner third(cached, &db, other);
  const Choice ignored = third.choose(shape, 16, at::kFloat);
  CHECK_FALSE(ignored.stored);
  CHECK(ignored.text == kMerged);
  CHECK(ignored.plan == nullptr);

  // A choice for this very key under another fingerprint is ignored too.
  store::put_kernel_choice(db, {kernel_key(shape, 64, at::kFloat, env), "another cpu|threads=9|torch=0.0",
                                plan, 0.5, 7, env.git_commit, ""});
  const Choice foreign = second.choose(shape, 64, at::kFloat);
  CHECK_FALSE(foreign.stored);
  CHECK(foreign.plan == nullptr);

  // A corrupt or foreign stored plan: the error names the database, the key and the repair.
  store::put_kernel_choice(db, {kernel_key(shape, 256, at::kFloat, env), env.fingerprint(), "((X,G1),garbage",
                                0.5, 7, env.git_commit, ""});
  CHECK_THROWS_WITH(second.choose(shape, 256, at::kFloat),
                    Contains(dir.file("tune.db")) && Contains("'((X,G1),garbage'") && Contains("kernel_choices") &&
                        Contains("--retune"));

  // apply() sets the stored plan on a model's TT layers.
  TTLinear layer(TTLinearOptions({2, 3}, {3, 2}, {1, 2, 3, 2, 1}));
  CHECK(second.apply(*layer, 16) == 1);
  REQUIRE(layer->plan());
  CHECK(layer->plan()->forward.steps().size() == 4);
}

TEST_CASE("after truncation the tuner tunes the new ranks", "[tuner]") {
  comera::testing::TempDir dir;
  auto db = store::ResultsDb::open(dir.file("tune.db"));
  const Environment env = current_environment();
  Tuner tuner(quick(), &db, env);
  TTLinear layer(TTLinearOptions({2, 3}, {3, 2}, {1, 2, 3, 2, 1}));
  tuner.apply(*layer, 8);
  {
    at::NoGradGuard no_grad;
    layer->rank_vectors()[1][0] = 0;  // prune one slice of bond 2
  }
  layer->truncate();
  REQUIRE(layer->shape().ranks() == std::vector<int64_t>{1, 2, 2, 2, 1});
  tuner.apply(*layer, 8);
  const auto all = store::list_kernel_choices(db);
  REQUIRE(all.size() == 2);
  CHECK(all[0].key.ranks == "1,2,3,2,1");
  CHECK(all[1].key.ranks == "1,2,2,2,1");
}
