#pragma once
// A sweep spec (JSON in experiments/): a base experiment and the axes a study varies. Every axis
// is a list of choices; each choice labels the trial ("point") and patches the experiment JSON
// at dotted paths. Grid sampling takes every combination, random sampling draws points with a
// seeded generator, adaptive sampling proposes each point from the trials so far (adaptive.h);
// with either, numeric axes may be ranges.
#include "search/sweep/pruning.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace comera::sweep {

struct Choice {
  nlohmann::json label;  // merged into the trial's point, e.g. {"gamma": 0.01}
  nlohmann::json patch;  // dotted path -> value, e.g. {"training.early_stage.gamma": 0.01}
};

// A numeric range for random or adaptive sampling: uniform, or log-uniform; whole numbers only
// when `integer`.
struct Range {
  double min = 0, max = 0;
  bool log = false;
  bool integer = false;
};

struct Axis {
  std::string name;             // the spec key ("gamma", "targets.loss", "set.training.epochs")
  std::vector<Choice> choices;  // listed values
  std::optional<Range> range;   // instead of choices (random sampling only)
  std::string label, path;      // where a sampled number goes
  bool dense_too = false;       // applies to dense baselines too (seeds, "set" overrides the dense build keeps)
  nlohmann::json also;          // patched whatever the choice (null values delete keys)
};

// What an adaptive sweep may spend before it stops proposing (0: no limit of that kind; at
// least one is set): trials proposed, epochs recorded by all the study's trials, minutes of
// training they recorded.
struct Budget {
  int64_t trials = 0, epochs = 0;
  double minutes = 0;
};

struct Sampling {
  bool random = false;
  bool adaptive = false;
  int64_t trials = 0;  // random: points drawn (distinct), before the seeds multiply them
  uint64_t seed = 0;
  Budget budget;                   // adaptive
  std::string sampler = "gp-ehvi";  // adaptive: search/propose/proposer.h's method
  int64_t initial = 0;             // adaptive: space-filling points first (0: the sampler's default)
  // adaptive: points given in the spec, proposed first and in order, as the proposer's values
  // (per axis after the seeds: a range's number, a list's index).
  std::vector<std::vector<double>> start;
};

// What a trial measures: a training run (the default), or the time and peak memory of single
// training steps on random tokens (batch = training.batch_size), without data.
struct StepMeasure {
  int64_t length = 128;  // tokens per sequence
  int64_t warmup = 2, repeats = 5;
};

struct SweepSpec {
  std::string file;  // where it was read from ("" when parsed from JSON)
  std::string name, description;
  std::string objectives;      // default "eval_loss:min,size:min" ("step_time_ms:min,peak_tensor_mb:min" for steps);
                               // only names recorded_objectives gives
  nlohmann::json base;         // the resolved base experiment, "overrides" applied
  std::string base_file;       // the file "base" names ("" when the base is inline)
  Sampling sampling;
  std::vector<Axis> axes;      // seeds first (outermost), targets last (innermost)
  bool dense_baseline = false, early_baseline = false;
  std::optional<StepMeasure> step;  // "measure": "step"
  std::optional<PruningRule> pruning;  // "pruning": off when absent
  // Published figures to overlay on plots: {"label", then objective name -> value}.
  nlohmann::json published = nlohmann::json::array();
  nlohmann::json source;       // the spec as written, base resolved (stored with the study)
};

// Where the contraction-order policy lives in an experiment.
inline const char* const kContractionPath = "training.contraction";
// The point label of a rank cap: applied after the shape, to every tensorized layer's ranks.
inline const char* const kRankCapLabel = "rank_cap";

// Reads a spec; "base" is an experiment file relative to the spec's folder, or an inline
// experiment object, changed by "overrides" ({"dotted.path": value}) for every trial. A
// published value may be a JSON pointer ("/mnli_six_encoder/dense_model_mb") into `reference`
// (a published-figures file, see published_figures.h), read when the spec uses one. Errors name the key.
SweepSpec load_sweep_spec(const std::string& file, const std::string& reference = "");
SweepSpec parse_sweep_spec(const nlohmann::json& json, const std::string& file = "",
                           const std::string& reference = "");

// The objectives a sweep's trials can have: the metrics a training trial records every epoch, or
// the times and sizes a step-measuring trial records. `task_metrics`: what a training trial's
// task adds (ModelKind::eval_metrics: "auc" for the DLRM's click prediction).
std::vector<std::string> recorded_objectives(bool step_measure,
                                             const std::vector<std::string>& task_metrics = {});

// Sets value at a dotted path ("training.early_stage.gamma"), creating objects on the way; a
// null value deletes the key.
void set_path(nlohmann::json& target, const std::string& dotted, const nlohmann::json& value);

}  // namespace comera::sweep
