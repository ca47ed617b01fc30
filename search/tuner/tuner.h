#pragma once
// The kernel auto-tuner: measures the candidates for a TT layer at a token count, keeps the
// winner only when it beats the layer's default (the merged path) by more than a noise margin,
// stores the choice in the results database under its key and environment fingerprint, and
// sets the chosen plans on a model's TT layers. Choices measured elsewhere (another device,
// thread count or LibTorch) are ignored.
#include "core/contract/plan.h"
#include "core/formats/tt_shape.h"
#include "search/environment.h"
#include "search/tuner/candidates.h"
#include "search/tuner/measure.h"

#include <c10/core/ScalarType.h>
#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace torch::nn {
class Module;
}

namespace comera::store {
class ResultsDb;
}

namespace comera::tuner {

struct TunerOptions {
  CandidateOptions candidates;
  MeasureOptions measure;
  double margin = 0.03;         // a candidate must beat the merged path by this fraction
  bool measure_missing = true;  // choose(): tune keys without a stored choice (else: merged)
  bool reuse_stored = true;     // choose(): false re-measures and replaces stored choices
};

// One tuned case: every candidate with its model cost and measured time.
struct TuneResult {
  TTShape shape;
  int64_t tokens = 0;
  std::vector<Candidate> candidates;
  std::vector<Measurement> measured;
  int chosen = -1;   // the decision
  int fastest = -1;  // the fastest measured candidate that can be chosen
  int merged = -1, dense = -1;
  // Candidate i's name, order, model cost and time (null for i < 0).
  nlohmann::json entry_json(int i) const;
  nlohmann::json to_json() const;
};

// The fastest choosable candidate (by median) if it beats "merged" by more than the noise: its
// median time ratio to "merged" over the rounds they shared is below 1 - margin, and it was the
// faster one in significantly many of those rounds (one-sided sign test, p <= 0.05; so at least
// 5 rounds). Else "merged".
int decide(const std::vector<Candidate>& candidates, const std::vector<Measurement>& measured,
           double margin, int* fastest = nullptr);

TuneResult tune(const TTShape& shape, int64_t tokens, at::ScalarType dtype,
                const TunerOptions& options,
                const std::function<void(const std::string&)>& progress = {});

// A plan for one key, and where it came from.
struct Choice {
  std::shared_ptr<const contract::ContractionPlan> plan;  // null: the merged path
  std::string text;                                       // "merged" or the plan's text
  double median_ms = 0;                                   // as measured
  bool stored = false;                                    // read from the database
};

class Tuner {
 public:
  // db may be null: choices then live for this process only.
  Tuner(TunerOptions options, store::ResultsDb* db, Environment env);

  void set_progress(std::function<void(const std::string&)> progress) { progress_ = std::move(progress); }
  // The plan for a layer of this shape at this token count (null = the merged path): a choice
  // stored for this key and environment, else tuned now (when measure_missing) and stored.
  Choice choose(const TTShape& shape, int64_t tokens, at::ScalarType dtype);
  // Sets the plan of every TTLinear in the tree for the token count it sees (by module path,
  // e.g. a classifier on [CLS] only sees the batch size); returns how many got a plan other
  // than the merged path. Call again after physical truncation: ranks, hence keys, have
  // changed (choices stay cached per key, so calling it often is cheap).
  int apply(torch::nn::Module& model, const std::function<int64_t(const std::string&)>& tokens);
  int apply(torch::nn::Module& model, int64_t tokens);

 private:
  TunerOptions options_;
  store::ResultsDb* db_;
  Environment env_;
  std::function<void(const std::string&)> progress_;
  std::map<std::string, Choice> memo_;
};

}  // namespace comera::tuner
