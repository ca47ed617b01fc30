#include "search/sweep/trial_runner.h"

#include "core/training/experiment.h"
#include "search/bench/step_benchmark.h"
#include "core/training/trainer.h"
#include "core/util/error.h"
#include "search/store/trial_queue.h"
#include "search/runs/trial_recorder.h"

#include <nlohmann/json.hpp>

#include <memory>

namespace comera::sweep {

namespace {

// Single training steps on random inputs: time and peak memory (no data, no epochs).
std::string measure_step(store::ResultsDb& db, const store::Trial& trial, const std::string& worker,
                         const ExperimentConfig& e) {
  const auto& step = trial.config.at("step");
  StepBenchmarkOptions o;
  o.batch = e.training.batch_size;
  o.length = step.at("length").get<int64_t>();
  o.warmup = step.at("warmup").get<int>();
  o.repeats = step.at("repeats").get<int>();
  o.seed = e.training.seed;
  const auto r = benchmark_step(e.model, e.training, o);
  store::finish_trial(
      db, trial.id, worker, store::TrialState::Complete,
      {{"step_time_ms", r.timing.median_ms},
       {"step_time_min_ms", r.timing.min_ms},
       {"tokens_per_s", r.tokens_per_s()},
       {"peak_mem_mb", r.peak_mem_mb},
       {"peak_tensor_mb", r.peak_tensor_mb},
       {"size", static_cast<double>(r.params)},
       {"size_mb", static_cast<double>(r.params) * 4 / 1e6},
       {"compression", static_cast<double>(r.dense_params) / static_cast<double>(r.params)}});
  return "  batch " + std::to_string(o.batch) + " x " + std::to_string(o.length) + ": median " +
         std::to_string(r.timing.median_ms) + " ms/step, tensors peak " +
         std::to_string(r.peak_tensor_mb) + " MB, " + std::to_string(r.params) + " parameters";
}

}  // namespace

void TrialRunner::message(const std::string& text) const {
  if (reporting_.on_message) reporting_.on_message(text);
}

const TaskData& TrialRunner::data(const DataConfig& config) {
  const std::string key = config.to_json().dump();
  auto it = data_.find(key);
  if (it == data_.end()) {
    message("loading data...");
    it = data_.emplace(key, load_task_data(config)).first;
    const auto& d = it->second;
    message("data: " + std::to_string(d.train->size()) + " training " + d.train->unit() + " (" +
            d.train_file + "), " + std::to_string(d.eval->size()) + " evaluation " +
            d.eval->unit() + " (" + d.eval_file + ")");
  }
  return it->second;
}

store::TrialState TrialRunner::run(store::ResultsDb& db, const store::Trial& trial,
                                   const std::string& worker) {
  TrialRecorder recorder(db, trial.id, worker);
  try {
    const auto e = parse_experiment(trial.config.at("experiment"));
    if (trial.config.contains("step")) {
      message(measure_step(db, trial, worker, e));
      return store::TrialState::Complete;
    }
    TrainerOptions options;
    options.on_epoch = [&recorder](const EpochMetrics& m) { recorder.epoch(m); };
    options.on_step = [&recorder] { recorder.heartbeat(); };
    if (reporting_.configure_trainer) reporting_.configure_trainer(options);
    Trainer trainer(e.model, e.training, data(e.data), options);
    const RunResult result = trainer.run();
    recorder.finish(result);
    if (result.status == RunStatus::Diverged) {
      message("trial " + std::to_string(trial.number) + " diverged: " + result.message);
      return store::TrialState::Diverged;
    }
    return store::TrialState::Complete;
  } catch (const std::exception& ex) {
    const std::string error = error_message(ex);
    message("trial " + std::to_string(trial.number) + " failed: " + error);
    try {
      recorder.fail(error);
    } catch (const std::exception& again) {
      // Taken from us meanwhile (declared stale and re-queued): nothing of ours to record.
      message("trial " + std::to_string(trial.number) + ": " + error_message(again));
    }
    return store::TrialState::Failed;
  }
}

}  // namespace comera::sweep
