#include "search/runs/claimed_trial.h"

#include "core/training/experiment.h"
#include "core/util/error.h"
#include "core/util/process.h"
#include "search/bench/step_benchmark.h"
#include "search/runs/recorded_run.h"
#include "search/runs/shared_early_stage.h"
#include "search/runs/trial_recorder.h"
#include "search/store/trial_queue.h"

#include <nlohmann/json.hpp>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>

namespace comera {

namespace {

void say(const ClaimedTrialOptions& o, const std::string& text) {
  if (o.on_message) o.on_message(text);
}

// Single training steps on random inputs: time and peak memory (no data, no epochs).
std::string measure_step(TrialRecorder& recorder, const nlohmann::json& step, const ExperimentConfig& e) {
  StepBenchmarkOptions o;
  o.batch = e.training.batch_size;
  o.length = step.at("length").get<int64_t>();
  o.warmup = step.at("warmup").get<int>();
  o.repeats = step.at("repeats").get<int>();
  o.seed = e.training.seed;
  const auto r = benchmark_step(e.model, e.training, o);
  recorder.measured({{"step_time_ms", r.timing.median_ms},
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

// A trial of several data-parallel ranks: `comera train --nproc N` records into the trial (rank
// 0 holds it as `worker`); its state in the database afterwards is the outcome.
store::TrialState run_ranks(store::ResultsDb& db, const store::Trial& trial, const std::string& worker,
                            const nlohmann::json& experiment, int64_t nproc, const ClaimedTrialOptions& o) {
  const std::string name = "trial " + std::to_string(trial.number);
  if (o.program.empty())
    throw Error(name + " asks for " + std::to_string(nproc) + " data-parallel ranks (training.nproc), "
                "which only the comera command can launch (comera sweep)");
  const auto checkpoint = trial_checkpoint(db.path(), trial);
  const auto config = checkpoint + ".experiment.json";
  std::filesystem::create_directories(std::filesystem::path(config).parent_path());
  std::ofstream(config) << experiment.dump(2);
  say(o, name + ": " + std::to_string(nproc) + " data-parallel ranks (comera train --nproc " + std::to_string(nproc) + ")");
  // COMERA_LAUNCHER_PID: should this worker die, the launcher stops its ranks resumably.
  const pid_t pid = start_child({o.program, "train", "--config", config, "--db", db.path(), "--checkpoint",
                                 checkpoint, "--resume", "--quiet", "--trial", std::to_string(trial.id),
                                 "--worker", worker},
                                {{"COMERA_LAUNCHER_PID", std::to_string(::getpid())}}, name);
  std::optional<int> status;
  bool forwarded = false;
  while (!(status = poll_process(pid))) {
    if (o.stop && o.stop->load() && !forwarded) ::kill(pid, SIGTERM), forwarded = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const auto ended = store::load_trial(db, trial.id);
  const auto state = ended ? ended->state : store::TrialState::Failed;
  if (state != store::TrialState::Running) return state;
  // The ranks ended without recording it (killed before they could): failed, resumable.
  const std::string error = "its ranks ended (" + describe_status(*status) + ") without recording an outcome";
  say(o, name + " failed: " + error);
  TrialRecorder(db, trial.id, worker).fail(error);
  return store::TrialState::Failed;
}

}  // namespace

store::TrialState run_claimed_trial(store::ResultsDb& db, const store::Trial& trial, const std::string& worker,
                                    const ClaimedTrialOptions& o) {
  const std::string name = "trial " + std::to_string(trial.number);
  bool started = false;  // from then on the run records its own end
  try {
    auto e = parse_experiment(trial.config.at("experiment"));
    if (!o.device.empty()) e.training.device = o.device;
    if (trial.config.contains("step")) {
      TrialRecorder recorder(db, trial.id, worker);
      say(o, measure_step(recorder, trial.config.at("step"), e));
      return store::TrialState::Complete;
    }
    if (e.training.nproc > 1) return run_ranks(db, trial, worker, trial.config.at("experiment"), e.training.nproc, o);
    RecordedRunOptions ro;
    ro.checkpoint = trial_checkpoint(db.path(), trial);
    ro.early_stage_copy = early_stage_checkpoint(db.path(), trial, e);
    if (const auto shared = start_from_shared(db, trial, e, ro.checkpoint)) {
      say(o, name + " starts from trial " + std::to_string(shared->from_trial) + "'s early stage (" +
                 std::to_string(shared->epochs) + " epoch(s), recorded as shared, not run again)");
      if (o.prune)
        for (int64_t epoch = 0; epoch < shared->epochs; ++epoch) {
          EpochMetrics m;
          m.epoch = epoch;
          if (const auto decision = o.prune(trial, m)) {
            say(o, name + " " + store::describe(*decision));
            TrialRecorder(db, trial.id, worker).pruned(*decision);
            return store::TrialState::Pruned;
          }
        }
    }
    ro.stop = o.stop;
    ro.configure_trainer = o.configure_trainer;
    ro.on_message = o.on_message;
    if (o.prune) ro.prune = [&](const EpochMetrics& m) { return o.prune(trial, m); };
    ro.checks = o.checks;
    RecordedRun run(e, o.data ? o.data(e.data) : load_task_data(e.data), ro, &db);
    if (run.trainer().resumed())
      say(o, name + " resumes from " + ro.checkpoint + " at step " + std::to_string(run.trainer().state().step));
    run.record_in(db, trial.id, worker);
    started = true;
    const RunResult result = run.run();
    if (const auto& decision = run.pruned()) {
      say(o, name + " " + store::describe(*decision));
      return store::TrialState::Pruned;
    }
    switch (result.status) {
      case RunStatus::Diverged:
        say(o, name + " diverged: " + result.message);
        return store::TrialState::Diverged;
      case RunStatus::Interrupted:
        say(o, name + " " + result.message);
        return store::TrialState::Killed;
      case RunStatus::StepLimit:
      case RunStatus::Completed:
        return store::TrialState::Complete;
    }
    return store::TrialState::Complete;
  } catch (const std::exception& ex) {
    const std::string error = error_message(ex);
    say(o, name + " failed: " + error);
    if (!started) try {
        TrialRecorder(db, trial.id, worker).fail(error);
      } catch (const std::exception& again) {
        // Taken from us meanwhile (declared stale and re-queued): nothing of ours to record.
        say(o, name + ": " + error_message(again));
      }
    return store::TrialState::Failed;
  }
}

}  // namespace comera
