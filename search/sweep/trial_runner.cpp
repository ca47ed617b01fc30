#include "search/sweep/trial_runner.h"

#include "core/training/experiment.h"
#include "core/util/error.h"
#include "search/bench/step_benchmark.h"
#include "search/runs/recorded_run.h"
#include "search/runs/trial_recorder.h"
#include "search/store/trial_queue.h"

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
  const std::string name = "trial " + std::to_string(trial.number);
  bool started = false;  // from then on the run records its own end
  try {
    const auto e = parse_experiment(trial.config.at("experiment"));
    if (trial.config.contains("step")) {
      message(measure_step(db, trial, worker, e));
      return store::TrialState::Complete;
    }
    RecordedRunOptions o;
    o.checkpoint = trial_checkpoint(db.path(), trial);
    o.stop = reporting_.stop;
    o.configure_trainer = reporting_.configure_trainer;
    o.on_message = reporting_.on_message;
    RecordedRun run(e, data(e.data), o, &db);
    if (run.trainer().resumed())
      message(name + " resumes from " + o.checkpoint + " at step " +
              std::to_string(run.trainer().state().step));
    run.record_in(db, trial.id, worker);
    started = true;
    const RunResult result = run.run();
    switch (result.status) {
      case RunStatus::Diverged:
        message(name + " diverged: " + result.message);
        return store::TrialState::Diverged;
      case RunStatus::Interrupted:
        message(name + " " + result.message);
        return store::TrialState::Killed;
      case RunStatus::StepLimit:
      case RunStatus::Completed:
        return store::TrialState::Complete;
    }
    return store::TrialState::Complete;
  } catch (const std::exception& ex) {
    const std::string error = error_message(ex);
    message(name + " failed: " + error);
    if (!started) try {
        TrialRecorder(db, trial.id, worker).fail(error);
      } catch (const std::exception& again) {
        // Taken from us meanwhile (declared stale and re-queued): nothing of ours to record.
        message(name + ": " + error_message(again));
      }
    return store::TrialState::Failed;
  }
}

}  // namespace comera::sweep
