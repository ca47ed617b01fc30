#include "search/tuner/tuner.h"

#include "core/layers/tt_linear.h"
#include "core/util/error.h"
#include "core/util/timing.h"
#include "search/store/kernel_choices.h"
#include "search/tuner/tuning_key.h"

#include <algorithm>
#include <cmath>

#include <torch/nn/module.h>

namespace comera::tuner {

namespace {

int index_of(const std::vector<Candidate>& candidates, const std::string& name) {
  for (size_t i = 0; i < candidates.size(); ++i)
    if (candidates[i].name == name) return static_cast<int>(i);
  return -1;
}

// A plan replaces the merged path only when faster in significantly many shared rounds.
constexpr double kSignificance = 0.05;

// P(at least k of n fair coin flips come up heads): the one-sided sign test.
double sign_test_p(size_t k, size_t n) {
  double p = 0, term = std::pow(0.5, static_cast<double>(n));  // C(n, 0) / 2^n
  for (size_t i = 0; i <= n; ++i) {
    if (i >= k) p += term;
    term = term * static_cast<double>(n - i) / static_cast<double>(i + 1);
  }
  return p;
}

std::string key_text(const store::KernelKey& k) {
  return k.layer_modes + " r=" + k.ranks + " B~" + std::to_string(k.token_bucket) + " " + k.dtype;
}

// a's time over b's, round by round over the rounds they shared: the median ratio, and in how
// many of the n rounds a was the faster.
struct Paired {
  double ratio = 1;
  size_t faster = 0, n = 0;
};

Paired paired(const Measurement& a, const Measurement& b) {
  Paired p;
  p.n = std::min(a.runs_ms.size(), b.runs_ms.size());
  std::vector<double> ratios;
  for (size_t i = 0; i < p.n; ++i) {
    ratios.push_back(a.runs_ms[i] / b.runs_ms[i]);
    p.faster += a.runs_ms[i] < b.runs_ms[i];
  }
  if (p.n > 0) p.ratio = median(ratios);
  return p;
}

// a beats b by more than the margin, and in significantly many shared rounds.
bool beats(const Measurement& a, const Measurement& b, double margin) {
  const Paired p = paired(a, b);
  return p.n > 0 && p.ratio < 1 - margin && sign_test_p(p.faster, p.n) <= kSignificance;
}

}  // namespace

int decide(const std::vector<Candidate>& candidates, const std::vector<Measurement>& measured,
           double margin, int* fastest) {
  auto choosable = [&](size_t i) { return !candidates[i].reference && measured[i].repeats > 0; };
  int best = -1;
  for (size_t i = 0; i < candidates.size(); ++i)
    if (choosable(i) && (best < 0 || measured[i].total_ms < measured[best].total_ms))
      best = static_cast<int>(i);
  if (fastest) *fastest = best;
  const int merged = index_of(candidates, kMerged);
  if (merged < 0 || measured[merged].repeats == 0) return best;
  // The fastest of the plans that beat the merged path. (Breaking ties within the margin by
  // model cost was tried: it favours many small contractions, whose per-call overhead the model
  // does not count, and missed the fastest by more.)
  int winner = -1;
  for (size_t i = 0; i < candidates.size(); ++i)
    if (static_cast<int>(i) != merged && choosable(i) && beats(measured[i], measured[merged], margin) &&
        (winner < 0 || measured[i].total_ms < measured[winner].total_ms))
      winner = static_cast<int>(i);
  return winner < 0 ? merged : winner;
}

TuneResult tune(const TTShape& shape, int64_t tokens, at::ScalarType dtype,
                const TunerOptions& options, const std::function<void(const std::string&)>& progress) {
  TuneResult r;
  r.shape = shape;
  r.tokens = tokens;
  r.candidates = make_candidates(shape, tokens, options.candidates);
  r.measured = measure(r.candidates, shape, tokens, dtype, options.measure, progress);
  r.chosen = decide(r.candidates, r.measured, options.margin, &r.fastest);
  r.merged = index_of(r.candidates, kMerged);
  r.dense = index_of(r.candidates, kDense);
  return r;
}

nlohmann::json TuneResult::entry_json(int i) const {
  if (i < 0) return nullptr;
  const auto& c = candidates[i];
  const auto& m = measured[i];
  nlohmann::json j{{"name", c.name},        {"order", c.text},      {"macs", c.cost.macs},
                   {"written", c.cost.written}, {"saved", c.cost.saved}, {"peak", c.cost.peak},
                   {"score", c.score},      {"repeats", m.repeats}};
  if (m.repeats > 0) {
    j["median_ms"] = m.total_ms;
    j["forward_ms"] = m.forward_ms;
    j["backward_ms"] = m.backward_ms;
  } else {
    j["median_ms"] = nullptr;
    j["skipped"] = m.skipped;
  }
  return j;
}

nlohmann::json TuneResult::to_json() const {
  nlohmann::json all = nlohmann::json::array();
  for (size_t i = 0; i < candidates.size(); ++i) all.push_back(entry_json(static_cast<int>(i)));
  return {{"shape", shape.str()},
          {"in_modes", shape.in_modes()},
          {"out_modes", shape.out_modes()},
          {"ranks", shape.ranks()},
          {"tokens", tokens},
          {"candidates", all},
          {"chosen", entry_json(chosen)},
          {"fastest", entry_json(fastest)},
          {"merged", entry_json(merged)},
          {"dense", entry_json(dense)}};
}

Tuner::Tuner(TunerOptions options, store::ResultsDb* db, Environment env)
    : options_(std::move(options)), db_(db), env_(std::move(env)) {}

Choice Tuner::choose(const TTShape& shape, int64_t tokens, at::ScalarType dtype) {
  const store::KernelKey key = kernel_key(shape, tokens, dtype, env_);
  const std::string text = key_text(key);
  auto it = memo_.find(text);
  if (it != memo_.end()) return it->second;
  Choice choice{nullptr, kMerged, 0, false};
  const auto stored = db_ && options_.reuse_stored
                          ? store::get_kernel_choice(*db_, key, env_.fingerprint()) : std::nullopt;
  if (stored) {
    try {
      choice = {plan_from_choice(stored->choice, static_cast<int>(shape.d())), stored->choice,
                stored->median_ms, true};
    } catch (const Error& e) {
      throw Error(db_->path() + ": the stored plan '" + stored->choice + "' for " + text +
                  " (table kernel_choices) cannot be read: " + e.what() +
                  "; measure it again with comera tune --retune, or training.contraction \"merged\"");
    }
  } else if (options_.measure_missing) {
    if (progress_) progress_("tuning " + text);
    const TuneResult r = tune(shape, key.token_bucket, dtype, options_, progress_);
    const auto& c = r.candidates[r.chosen];
    const auto& m = r.measured[r.chosen];
    choice = {c.plan, c.text, m.total_ms, false};
    if (db_)
      store::put_kernel_choice(*db_, {key, env_.fingerprint(), c.text, m.total_ms, m.repeats,
                                      env_.git_commit, ""});
  }
  return memo_[text] = choice;
}

int Tuner::apply(torch::nn::Module& model,
                 const std::function<int64_t(const std::string&)>& tokens) {
  int planned = 0;
  for (const auto& item : model.named_modules()) {
    auto* tt = dynamic_cast<TTLinearImpl*>(item.value().get());
    if (!tt) continue;
    const auto dtype = tt->cores().front().scalar_type();
    tt->set_plan(choose(tt->shape(), tokens(item.key()), dtype).plan);
    planned += tt->plan() != nullptr;
  }
  return planned;
}

int Tuner::apply(torch::nn::Module& model, int64_t tokens) {
  return apply(model, [tokens](const std::string&) { return tokens; });
}

}  // namespace comera::tuner
