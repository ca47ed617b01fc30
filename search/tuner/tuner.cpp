#include "search/tuner/tuner.h"

#include "core/layers/tt_linear.h"
#include "search/store/kernel_choices.h"
#include "search/tuner/tuning_key.h"

#include <torch/nn/module.h>

namespace comera::tuner {

namespace {

int index_of(const std::vector<Candidate>& candidates, const std::string& name) {
  for (size_t i = 0; i < candidates.size(); ++i)
    if (candidates[i].name == name) return static_cast<int>(i);
  return -1;
}

std::string key_text(const store::KernelKey& k) {
  return k.layer_modes + " r=" + k.ranks + " B~" + std::to_string(k.token_bucket) + " " + k.dtype;
}

}  // namespace

int decide(const std::vector<Candidate>& candidates, const std::vector<Measurement>& measured,
           double margin, int* fastest) {
  int best = -1;
  for (size_t i = 0; i < candidates.size(); ++i)
    if (!candidates[i].reference && measured[i].repeats > 0 &&
        (best < 0 || measured[i].total_ms < measured[best].total_ms))
      best = static_cast<int>(i);
  if (fastest) *fastest = best;
  const int merged = index_of(candidates, kMerged);
  if (merged < 0 || measured[merged].repeats == 0) return best;
  return best >= 0 && measured[best].total_ms < (1 - margin) * measured[merged].total_ms ? best : merged;
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

nlohmann::json TuneResult::to_json() const {
  auto entry = [&](int i) -> nlohmann::json {
    if (i < 0) return nullptr;
    const auto& c = candidates[i];
    const auto& m = measured[i];
    nlohmann::json j{{"name", c.name},          {"order", c.text},
                     {"macs", c.cost.macs},     {"written", c.cost.written},
                     {"saved", c.cost.saved},   {"peak", c.cost.peak},
                     {"score", c.score},        {"repeats", m.repeats}};
    if (m.repeats > 0) {
      j["median_ms"] = m.total_ms;
      j["forward_ms"] = m.forward_ms;
      j["backward_ms"] = m.backward_ms;
    } else {
      j["median_ms"] = nullptr;
      j["skipped"] = m.skipped;
    }
    return j;
  };
  nlohmann::json all = nlohmann::json::array();
  for (size_t i = 0; i < candidates.size(); ++i) all.push_back(entry(static_cast<int>(i)));
  return {{"shape", shape.str()},
          {"in_modes", shape.in_modes()},
          {"out_modes", shape.out_modes()},
          {"ranks", shape.ranks()},
          {"tokens", tokens},
          {"candidates", all},
          {"chosen", entry(chosen)},
          {"fastest", entry(fastest)},
          {"merged", entry(merged)},
          {"dense", entry(dense)}};
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
    choice = {plan_from_choice(stored->choice, static_cast<int>(shape.d())), stored->choice,
              stored->median_ms, true};
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

int Tuner::apply(torch::nn::Module& model, int64_t tokens) {
  int planned = 0;
  for (const auto& m : model.modules()) {
    auto* tt = dynamic_cast<TTLinearImpl*>(m.get());
    if (!tt) continue;
    const auto dtype = tt->cores().front().scalar_type();
    tt->set_plan(choose(tt->shape(), tokens, dtype).plan);
    planned += tt->plan() != nullptr;
  }
  return planned;
}

}  // namespace comera::tuner
