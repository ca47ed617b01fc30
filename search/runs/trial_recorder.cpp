#include "search/runs/trial_recorder.h"

#include "core/util/comma_list.h"

#include "search/store/checks.h"
#include "search/store/epoch_metrics.h"
#include "search/store/layer_ranks.h"

#include <algorithm>

namespace comera {

namespace {

// An epoch's values by name (recorded_metric_names reads the names from here too).
std::map<std::string, double> epoch_values(const EpochMetrics& m) {
  std::map<std::string, double> values = {{"train_loss", m.train_loss},
          {"train_accuracy", m.train_accuracy},
          {"eval_loss", m.eval_loss},
          {"accuracy", m.accuracy},
          {"size", static_cast<double>(m.size.total_params)},
          {"tensorized_size", static_cast<double>(m.size.tensorized)},
          {"size_mb", m.size.megabytes()},
          {"surrogate", m.surrogate},
          {"compression", m.size.compression()},
          {"step_time_ms", m.step_time_ms},
          {"tokens_per_s", m.tokens_per_s},
          {"peak_mem_mb", m.peak_mem_mb},
          {"peak_tensor_mb", m.peak_tensor_mb},
          {"elapsed_s", m.elapsed_s}};
  values.insert(m.eval_metrics.begin(), m.eval_metrics.end());
  // Data-parallel runs only: the gradient all-reduce per step.
  if (m.ranks > 1)
    values.insert({{"ranks", static_cast<double>(m.ranks)},
                   {"all_reduce_ms", m.all_reduce_ms},
                   {"all_reduce_mb", m.all_reduce_mb}});
  return values;
}

const std::vector<std::string> kDataParallel = {"ranks", "all_reduce_ms", "all_reduce_mb"};

}  // namespace

// Recorded by late-stage epochs only: the targets they worked toward.
const std::vector<std::string> kLateTargets = {"loss_target", "size_target"};

namespace {

// What an epoch or a check records: its values, whether (and how much of) its epoch it covers,
// and the late stage's targets.
std::map<std::string, double> recorded_values(const EpochMetrics& m) {
  auto values = epoch_values(m);
  if (m.partial) values["partial"] = 1, values["epoch_fraction"] = m.epoch_fraction;
  if (m.stage == "late") {
    values[kLateTargets[0]] = m.loss_target;
    values[kLateTargets[1]] = m.size_target;
  }
  return values;
}

}  // namespace

std::vector<std::string> recorded_metric_names(const std::vector<std::string>& task_metrics) {
  std::vector<std::string> names = kLateTargets;
  names.insert(names.end(), kDataParallel.begin(), kDataParallel.end());
  names.insert(names.end(), task_metrics.begin(), task_metrics.end());
  for (const auto& [name, value] : epoch_values(EpochMetrics{})) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

const std::vector<std::string>& step_objective_names() {
  static const std::vector<std::string> names = {"compression",      "peak_mem_mb",  "peak_tensor_mb",
                                                 "size",             "size_mb",      "step_time_min_ms",
                                                 "step_time_ms",     "tokens_per_s"};
  return names;
}

std::vector<std::string> recorded_objectives(const ExperimentConfig& e, bool step) {
  if (step) return step_objective_names();
  std::vector<std::string> names = e.model.model_kind().eval_metrics(e.training.task);
  for (const auto& [name, value] : epoch_values(EpochMetrics{})) names.push_back(name);
  if (e.training.late.enabled) names.insert(names.end(), kLateTargets.begin(), kLateTargets.end());
  if (e.training.nproc > 1) names.insert(names.end(), kDataParallel.begin(), kDataParallel.end());
  std::sort(names.begin(), names.end());
  return names;
}

std::string unrecorded_reason(const std::vector<std::string>& names, const std::string& objective) {
  if (std::find(names.begin(), names.end(), objective) != names.end()) return "";
  if (std::find(kLateTargets.begin(), kLateTargets.end(), objective) != kLateTargets.end())
    return "they have no late stage";
  if (std::find(kDataParallel.begin(), kDataParallel.end(), objective) != kDataParallel.end())
    return "they train in one process (training.nproc 1)";
  return "it is not among what they record: " + join_names(names);
}

TrialRecorder::TrialRecorder(store::ResultsDb& db, int64_t trial_id, std::string worker)
    : db_(db), trial_id_(trial_id), worker_(std::move(worker)) {
  // A resumed trial reports the last epoch it recorded before, should nothing be left to run.
  const auto epochs = store::read_epochs(db_.sql(), trial_id_);
  if (!epochs.empty()) last_ = {epochs.back().metrics.begin(), epochs.back().metrics.end()};
}

void TrialRecorder::epoch(const EpochMetrics& m) {
  store::EpochRecord record;
  record.epoch = m.epoch;
  record.step = m.step;
  record.stage = m.stage;
  record.metrics = recorded_values(m);
  std::vector<store::LayerRanks> ranks;
  for (const auto& l : m.size.layers) ranks.push_back({l.name, l.ranks, l.exact});
  db_.write([&] {
    store::require_held(db_, trial_id_, worker_);
    store::record_epoch(db_, trial_id_, record);
    store::record_layer_ranks(db_, trial_id_, m.epoch, ranks);
  });
  last_ = {record.metrics.begin(), record.metrics.end()};
}

void TrialRecorder::check(const EpochMetrics& m) {
  db_.write([&] {
    store::require_held(db_, trial_id_, worker_);
    store::record_check(db_, trial_id_, {m.step, m.epoch, recorded_values(m)});
  });
}

void TrialRecorder::finish(const RunResult& result) {
  switch (result.status) {
    case RunStatus::Completed:
      store::finish_trial(db_, trial_id_, worker_, store::TrialState::Complete, last_);
      break;
    case RunStatus::Diverged:
      store::finish_trial(db_, trial_id_, worker_, store::TrialState::Diverged, last_,
                          result.message);
      break;
    case RunStatus::Interrupted:
    case RunStatus::StepLimit:
      store::finish_trial(db_, trial_id_, worker_, store::TrialState::Killed, last_, result.message);
      break;
  }
}

void TrialRecorder::pruned(const store::Decision& decision) {
  db_.write([&] {
    store::finish_trial(db_, trial_id_, worker_, store::TrialState::Pruned, last_, store::describe(decision));
    store::write_decision(db_.sql(), trial_id_, decision);
  });
}

void TrialRecorder::measured(const store::ObjectiveValues& objectives) {
  last_ = objectives;
  store::finish_trial(db_, trial_id_, worker_, store::TrialState::Complete, last_);
}

void TrialRecorder::fail(const std::string& error) {
  store::finish_trial(db_, trial_id_, worker_, store::TrialState::Failed, last_, error);
}

}  // namespace comera
