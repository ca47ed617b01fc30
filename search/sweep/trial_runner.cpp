#include "search/sweep/trial_runner.h"

#include "core/training/experiment.h"
#include "core/training/step_benchmark.h"
#include "core/training/trainer.h"
#include "core/util/error.h"
#include "search/store/trial_queue.h"
#include "search/training/trial_recorder.h"

#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>

namespace comera::sweep {

namespace {

// Single training steps on random tokens: time and peak memory (no data, no epochs).
void measure_step(store::ResultsDb& db, const store::Trial& trial, const std::string& worker,
                  const ExperimentConfig& e) {
  const auto& step = trial.config.at("step");
  StepBenchmarkOptions o;
  o.batch = e.training.batch_size;
  o.length = step.at("length").get<int64_t>();
  o.warmup = step.at("warmup").get<int>();
  o.repeats = step.at("repeats").get<int>();
  o.seed = e.training.seed;
  const auto r = benchmark_step(e.model, e.training, o);
  std::cerr << "  batch " << o.batch << " x " << o.length << ": median " << r.timing.median_ms
            << " ms/step, tensors peak " << r.peak_tensor_mb << " MB, " << r.params << " parameters"
            << std::endl;
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
}

}  // namespace

const TaskData& TrialRunner::data(const DataConfig& config) {
  const std::string key = config.to_json().dump();
  auto it = data_.find(key);
  if (it == data_.end()) {
    std::cerr << "loading data..." << std::endl;
    it = data_.emplace(key, load_task_data(config)).first;
    std::cerr << "data: " << it->second.train.size() << " training pairs (" << it->second.train_file
              << "), " << it->second.eval.size() << " evaluation pairs (" << it->second.eval_file
              << ")" << std::endl;
  }
  return it->second;
}

store::TrialState TrialRunner::run(store::ResultsDb& db, const store::Trial& trial,
                                   const std::string& worker) {
  TrialRecorder recorder(db, trial.id, worker);
  try {
    const auto e = parse_experiment(trial.config.at("experiment"));
    if (trial.config.contains("step")) {
      measure_step(db, trial, worker, e);
      return store::TrialState::Complete;
    }
    const TaskData& task = data(e.data);
    if (task.vocab_size > e.model.vocab)
      throw Error("the vocabulary has " + std::to_string(task.vocab_size) +
                  " tokens but model.vocab is " + std::to_string(e.model.vocab) +
                  " (raise model.vocab in the base experiment)");
    TrainerOptions options;
    options.progress = progress_;
    options.masking = masking_options(task);
    options.on_epoch = [&recorder](const EpochMetrics& m) { recorder.epoch(m); };
    options.on_step = [&recorder] { recorder.heartbeat(); };
    Trainer trainer(e.model, e.training, task.train, task.eval, options);
    const RunResult result = trainer.run();
    recorder.finish(result);
    if (result.status == RunStatus::Diverged) {
      std::cerr << "trial " << trial.number << " diverged: " << result.message << std::endl;
      return store::TrialState::Diverged;
    }
    return store::TrialState::Complete;
  } catch (const std::exception& ex) {
    const std::string message = error_message(ex);
    std::cerr << "trial " << trial.number << " failed: " << message << std::endl;
    try {
      recorder.fail(message);
    } catch (const std::exception& again) {
      // Taken from us meanwhile (declared stale and re-queued): nothing of ours to record.
      std::cerr << "trial " << trial.number << ": " << error_message(again) << std::endl;
    }
    return store::TrialState::Failed;
  }
}

}  // namespace comera::sweep
