#include "search/runs/recorded_run.h"

#include "core/contract/named_paths.h"
#include "core/contract/plan.h"
#include "core/contract/tt_network.h"
#include "core/layers/tt_linear.h"
#include "core/util/error.h"
#include "search/environment.h"
#include "search/store/trial_queue.h"
#include "search/tuner/tuner.h"

#include <torch/nn/module.h>

#include <filesystem>

namespace comera {

RecordedRun::RecordedRun(const ExperimentConfig& experiment, TaskData data, RecordedRunOptions options,
                         store::ResultsDb* db)
    : experiment_(experiment), options_(std::move(options)), db_(db) {
  TrainerOptions t;
  t.checkpoint = options_.checkpoint;
  t.resume = options_.resume;
  t.early_stage_copy = options_.early_stage_copy;
  t.memory_baseline = options_.memory_baseline;
  t.stop = options_.stop;
  t.parallel = options_.parallel;
  t.stop_at_step = options_.stop_at_step;
  t.on_epoch = [this](const EpochMetrics& m) {
    if (recorder_) recorder_->epoch(m);
    plan_layers();
  };
  if (options_.prune) {
    t.stop_after_epoch = [this](const EpochMetrics& m) {
      if (!recorder_ || m.partial) return false;
      pruned_ = options_.prune(m);
      return pruned_.has_value();
    };
    t.checks = options_.checks;
    t.stop_at_check = [this](const EpochMetrics& m) {
      if (!recorder_) return false;
      recorder_->check(m);
      pruned_ = options_.prune(m);
      return pruned_.has_value();
    };
  }
  t.on_step = [this] {
    if (experiment_.training.truncation.when == TruncateWhen::Steps) plan_layers();
  };
  t.lost = &lost_;
  if (options_.configure_trainer) options_.configure_trainer(t);
  trainer_ = std::make_unique<Trainer>(experiment_.model, experiment_.training, std::move(data), t);
}

RecordedRun::~RecordedRun() = default;

void RecordedRun::record_in(store::ResultsDb& db, int64_t trial_id, const std::string& worker) {
  recorder_ = std::make_unique<TrialRecorder>(db, trial_id, worker);
  heartbeat_ = std::make_unique<ClaimHeartbeat>(db.path(), trial_id, worker, options_.heartbeat_interval, &lost_);
}

void RecordedRun::plan_layers() {
  const auto& policy = experiment_.training.contraction;
  if (policy == "merged") return;  // every layer's default
  auto& task = trainer_->task();
  const auto& e = experiment_;
  auto rows = [&](const std::string& layer) {
    return task.layer_rows(layer, e.training.batch_size, e.data.max_length);
  };
  if (policy == "core-by-core" || policy == "reconstruct") {
    // A named order depends on the layer's shape only through d, which truncation keeps.
    for (const auto& item : task.model().named_modules())
      if (auto* tt = dynamic_cast<TTLinearImpl*>(item.value().get()); tt && !tt->plan()) {
        const contract::TTNetwork net(tt->shape(), rows(item.key()));
        tt->set_plan(std::make_shared<const contract::ContractionPlan>(
            policy, policy == "reconstruct" ? contract::reconstruct_order(net)
                                            : contract::core_by_core_order(net)));
      }
    return;
  }
  if (!tuner_) {
    tuner::TunerOptions o;
    o.measure_missing = policy == "tuned";
    o.measure.device = experiment_.training.device;
    tuner_ = std::make_unique<tuner::Tuner>(o, db_, current_environment(experiment_.training.device));
    if (options_.on_message)
      tuner_->set_progress([say = options_.on_message](const std::string& what) { say("  " + what); });
  }
  const int planned = tuner_->apply(task.model(), rows);
  if (options_.on_message && planned != planned_)
    options_.on_message("contraction plans (" + policy + "): " + std::to_string(planned) +
                        " TT layers off the merged path");
  planned_ = planned;
}

RunResult RecordedRun::run() {
  RunResult result;
  try {
    plan_layers();
    result = trainer_->run();
  } catch (const store::LostClaim&) {
    // A record found the claim lost before the heartbeat did.
    lost_ = true;
  } catch (const std::exception& ex) {
    heartbeat_.reset();
    if (recorder_ && !lost_) recorder_->fail(error_message(ex));
    throw;
  }
  heartbeat_.reset();
  if (lost_)
    throw Error("trial " + std::to_string(recorder_->trial_id()) + " is no longer this worker's (declared "
                "stale and claimed again): its run stopped at step " + std::to_string(trainer_->state().step) +
                ", recording nothing more");
  if (recorder_) {
    try {
      // Pruned at the last epoch, the run is complete all the same.
      if (pruned_ && result.status != RunStatus::StepLimit) pruned_.reset();
      if (pruned_)
        recorder_->pruned(*pruned_);
      else
        recorder_->finish(result);
    } catch (const std::exception& ex) {
      // Left running, the trial would be neither resumed nor rerun: failed, with the reason.
      recorder_->fail("its end could not be recorded: " + error_message(ex));
      throw;
    }
  }
  return result;
}

std::string checkpoint_folder(const std::string& db_path, const std::string& study) {
  return (std::filesystem::absolute(db_path).parent_path() / "checkpoints" / study).string();
}

std::string trial_checkpoint(const std::string& db_path, const store::Trial& trial) {
  const std::filesystem::path folder = checkpoint_folder(db_path, trial.study);
  return (folder / ("trial-" + std::to_string(trial.number) + "-" + trial.uid.substr(0, 12) + ".pt")).string();
}

}  // namespace comera
