#include "core/training/trainer.h"

#include "core/distributed/data_parallel.h"
#include "core/layers/size.h"
#include "core/training/lr_schedule.h"
#include "core/training/optimizer.h"
#include "core/training/param_groups.h"
#include "core/training/rank_truncation.h"
#include "core/training/sliceable_optimizer.h"
#include "core/kernels/dropout_mask.h"
#include "core/kernels/fast_kernels.h"
#include "core/util/comma_list.h"
#include "core/util/device.h"
#include "core/util/error.h"
#include "core/util/memory.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <mutex>
#include <set>

namespace comera {

namespace {

using Clock = std::chrono::steady_clock;

// LibTorch's layer initialisers draw from the global CPU generator alone. The model is built
// from it seeded with `seed`, under a lock that keeps other trainers out; `generator` goes on
// from where the build left it (the stream a run drew from when it used the global generator
// throughout), and the global generator is given back as it was.
std::unique_ptr<Task> build_seeded(const ModelSpec& spec, const TaskSpec& task, const DataInfo& info,
                                   uint64_t seed, at::Generator& generator) {
  static std::mutex building;
  std::lock_guard<std::mutex> lock(building);
  auto global = at::detail::getDefaultCPUGenerator();
  const auto before = global.clone();
  global.set_current_seed(seed);
  auto built = spec.build(task, info);
  generator = global.clone();
  global.set_state(before.get_state());
  return built;
}

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The shuffle seed of one epoch: a fixed function of (seed, epoch), so a resumed run visits
// the batches in the same order.
uint64_t epoch_seed(uint64_t seed, int64_t epoch) {
  return seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(epoch) + 1;
}

// The keys (dotted) whose values differ between two training sections, e.g. "epochs 3 -> 5".
std::string changed_keys(const nlohmann::json& before, const nlohmann::json& now,
                         const std::string& prefix = "") {
  std::string out;
  auto add = [&](const std::string& key, const nlohmann::json& a, const nlohmann::json& b) {
    out += (out.empty() ? "" : ", ") + key + " " + (a.is_null() ? "unset" : a.dump()) + " -> " +
           (b.is_null() ? "unset" : b.dump());
  };
  if (!before.is_object() || !now.is_object()) {
    if (before != now) add(prefix.empty() ? "value" : prefix, before, now);
    return out;
  }
  std::set<std::string> keys;
  for (const auto& item : before.items()) keys.insert(item.key());
  for (const auto& item : now.items()) keys.insert(item.key());
  for (const auto& key : keys) {
    const auto a = before.value(key, nlohmann::json()), b = now.value(key, nlohmann::json());
    if (a == b) continue;
    const auto path = prefix.empty() ? key : prefix + "." + key;
    if (a.is_object() && b.is_object()) {
      const auto inner = changed_keys(a, b, path);
      out += (out.empty() || inner.empty() ? "" : ", ") + inner;
    } else {
      add(path, a, b);
    }
  }
  return out;
}

// What must match on resume. The device is not part of it: a run may go on elsewhere.
nlohmann::json identity_of(const ModelSpec& model, const TrainConfig& training, const TaskData& data) {
  auto t = training.to_json();
  t.erase("device");
  const auto where = [](const std::string& file) {
    return file.empty() ? file : std::filesystem::weakly_canonical(file).string();
  };
  return {{"model", model.to_json()},
          {"training", t},
          {"data_order", data.train->order_key()},
          {"data", {{"train", where(data.train_file)},
                    {"eval", where(data.eval_file)},
                    {"eval_examples", data.eval ? data.eval->size() : 0}}}};
}

// A data-parallel rank's random stream for one step.
uint64_t step_seed(uint64_t seed, int64_t step, int rank) {
  return (seed * 0x9E3779B97F4A7C15ull) ^ (static_cast<uint64_t>(step) * 0xBF58476D1CE4E5B9ull) ^
         (static_cast<uint64_t>(rank + 1) * 0x94D049BB133111EBull);
}

}  // namespace

const char* run_status_name(RunStatus status) {
  switch (status) {
    case RunStatus::Completed: return "completed";
    case RunStatus::StepLimit: return "step_limit";
    case RunStatus::Diverged: return "diverged";
    case RunStatus::Interrupted: return "interrupted";
  }
  return "";
}

Trainer::Trainer(ModelSpec model, TrainConfig training, TaskData data, TrainerOptions options)
    : model_spec_(std::move(model)),
      config_(std::move(training)),
      data_(std::move(data)),
      options_(std::move(options)),
      device_(parse_device(config_.device, "training.device")) {
  const FastKernelsGuard kernels(options_.fast_kernels);
  memory_baseline_ = options_.memory_baseline >= 0 ? options_.memory_baseline : idle_rss_bytes();
  if (options_.parallel) model_spec_.model_kind().check_data_parallel(model_spec_.settings);
  // What reading left out often says why a split is empty (every line malformed, say).
  std::string left_out;
  for (const auto& note : data_.notes) left_out += "; " + note;
  if (!data_.train || data_.train->size() == 0)
    throw Error("the training set is empty (check the data directory" + left_out + ")");
  if (!data_.eval || data_.eval->size() == 0)
    throw Error("the evaluation set is empty (check the data directory and data.eval" + left_out + ")");
  for (size_t i = 0; i < config_.length_phases.size(); ++i)
    if (data_.info.max_length > 0 && config_.length_phases[i].max_length > data_.info.max_length)
      throw Error("training.length_phases[" + std::to_string(i) + "].max_length " +
                  std::to_string(config_.length_phases[i].max_length) + " exceeds data.max_length " +
                  std::to_string(data_.info.max_length) +
                  " (the examples are encoded at data.max_length: raise it to the longest phase)");
  require_device(device_);
  auto* parallel = options_.parallel;
  if (parallel && !device_.is_cpu())
    throw Error("data-parallel training runs on the CPU (c10d's Gloo group); NCCL for " +
                device_.str() + " needs a CUDA build of comera, which this is not: set "
                "training.device to cpu, or train with one process");
  if (parallel && config_.nproc > 1 && parallel->size() != config_.nproc)
    throw Error("training.nproc is " + std::to_string(config_.nproc) + " but the launcher started " +
                std::to_string(parallel->size()) + " ranks (WORLD_SIZE): make them agree, or set "
                "training.nproc to 1 to take the launcher's count");
  if (parallel && config_.batch_size < parallel->size())
    throw Error("training.batch_size " + std::to_string(config_.batch_size) + " is smaller than the " +
                std::to_string(parallel->size()) + " data-parallel ranks: every rank needs an example "
                "of each batch (raise the batch size or use fewer ranks)");
  // A late stage past the run's end would leave a two-stage experiment early-stage only.
  if (const auto& late = config_.late; late.enabled) {
    const int64_t batches = (data_.train->size() + config_.batch_size - 1) / config_.batch_size;
    const int64_t first = late.start_step > 0 ? late.start_step : late.start_epoch * batches;
    const int64_t steps = config_.epochs * batches;
    if (first >= steps)
      throw Error("training.late_stage.start_step " + std::to_string(first) + " is past the run's last step (" +
                  std::to_string(steps) + " steps in " + std::to_string(config_.epochs) +
                  " epochs): lower it, or raise training.epochs");
    if (config_.max_steps > 0 && first >= config_.max_steps)
      throw Error("training.max_steps " + std::to_string(config_.max_steps) + " ends the run before its late stage "
                  "starts (step " + std::to_string(first) + "): raise max_steps, or leave out training.late_stage");
  }
  const bool writes = !parallel || parallel->world().is_root();
  if (!options_.checkpoint.empty() && writes)
    lock_ = std::make_unique<CheckpointLock>(options_.checkpoint);
  task_ = build_seeded(model_spec_, config_.task, data_.info, config_.seed, generator_);
  task_->check_eval_set(*data_.eval);
  if (!config_.length_phases.empty() && !task_->has_sequences())
    throw Error("training.length_phases: a " + model_spec_.kind + " model's batches have no token "
                "sequences to cut (remove training.length_phases)");
  auto& net = task_->model();
  // Size units come from the freshly initialised model (all d = 1).
  {
    at::NoGradGuard no_grad;
    state_.size_scale = surrogate_size(net, config_.size_surrogate).item<double>();
    state_.initial_size = static_cast<double>(model_size(net).tensorized);
  }
  net.to(device_);
  const bool resume = options_.resume && !options_.checkpoint.empty() &&
                      std::filesystem::exists(options_.checkpoint);
  std::unique_ptr<Checkpoint> checkpoint;
  if (resume) {
    checkpoint = std::make_unique<Checkpoint>(options_.checkpoint, Checkpoint::kStartAfresh, device_);
    const auto expected = identity_of(model_spec_, config_, data_);
    if (checkpoint->identity().at("model") != expected.at("model"))
      throw Error("checkpoint " + options_.checkpoint +
                  " was made with a different model config (resume with the same config, or start "
                  "a new run with another --checkpoint)");
    // Before its late stage began, a run holds nothing its late-stage settings did: those may
    // differ, so runs toward other targets go on from one early stage.
    const auto made_for = [&](nlohmann::json training) {
      return checkpoint->state().late ? training : before_late(std::move(training));
    };
    const auto changed = changed_keys(made_for(checkpoint->identity().at("training")),
                                      made_for(expected.at("training")));
    if (!changed.empty())
      throw Error("checkpoint " + options_.checkpoint + " was made with other training settings (" +
                  changed + "): resuming would record a run that no longer matches its config. "
                  "Resume with the settings it was made with, or start a new run (another "
                  "--checkpoint, or without --resume)");
    // Checkpoints written before the data order was recorded have none to compare.
    const auto& made = checkpoint->identity();
    if (made.contains("data_order") && made.at("data_order") != expected.at("data_order"))
      throw Error("checkpoint " + options_.checkpoint + " was made reading " +
                  made.at("data_order").get<std::string>() + " for training, and this run reads " +
                  expected.at("data_order").get<std::string>() +
                  ": its batches would not go on where the stopped run left off. Resume with the "
                  "data settings it was made with (the training file, train_limit, "
                  "data.criteo.shuffle_buffer), or start a new run (another --checkpoint, or "
                  "without --resume)");
    // Checkpoints written before the data files were recorded have none to compare.
    if (made.contains("data") && made.at("data") != expected.at("data"))
      throw Error("checkpoint " + options_.checkpoint + " was made with other data (" +
                  changed_keys(made.at("data"), expected.at("data"), "data") +
                  "): resuming would record a run that no longer matches its data. Resume with "
                  "the data it was made with (--data, --eval-limit, data.*), or start a new run "
                  "(another --checkpoint, or without --resume)");
    checkpoint->load_model(net);
  } else if (!config_.fixed_ranks.empty()) {
    restore_ranks(net, config_.fixed_ranks, true,
                  {"training.fixed_ranks", "name every tensorized layer with its whole rank list, as `comera train "
                                           "--json` lists them at an epoch's end"});
    // Fresh values at these ranks, as if built with them; a layer with an empty bond stays zero.
    for (const auto& [name, layer] : tensorized_layers(net)) {
      (void)name;
      bool empty_bond = false;
      for (const auto& d : layer->rank_vectors())
        empty_bond = empty_bond || !d.abs().ge(layer->threshold()).any().item<bool>();
      if (!empty_bond) layer->reset_parameters();
    }
    notice("fixed ranks: " + std::to_string(config_.fixed_ranks.size()) +
           " tensorized layers start at the given ranks and keep them");
  } else if (!config_.init_from.empty()) {
    const Checkpoint start(config_.init_from,
                           "training.init_from: run the experiment that writes it first, e.g. the "
                           "masked-LM pre-training preset, or point init_from elsewhere",
                           device_);
    const auto loaded = start.init_model(
        net, model_spec_,
        [this](const std::string& name) { return task_->is_head(name); });
    notice("initialised from " + config_.init_from + ": " + std::to_string(loaded) +
           " tensors (all but the heads); heads start fresh");
  }
  optimizer_ = make_optimizer(net, config_.optimizer);
  if (config_.truncation.when != TruncateWhen::Never && !can_slice(*optimizer_))
    throw Error("the optimiser cannot slice its state when rank truncation cuts the cores (set "
                "training.truncation.when to \"never\")");
  objective_ = std::make_unique<Objective>(config_.size_surrogate, config_.early, config_.late,
                                           state_.size_scale, state_.initial_size);
  if (resume) {
    checkpoint->load_optimizer(*optimizer_);
    checkpoint->restore_rng(generator_);
    state_ = checkpoint->state();
    saved_step_ = state_.step;
    objective_ = std::make_unique<Objective>(config_.size_surrogate, config_.early, config_.late,
                                             state_.size_scale, state_.initial_size);
    if (state_.late) objective_->resume_late(state_.size_target);
    if (state_.late && config_.late.control == LateControl::Cut)
      cuts_ = std::make_unique<LateCuts>(config_.late, state_.initial_size,
                                         state_.late_cuts.is_null() ? LateCutState{}
                                                                    : LateCutState::from_json(state_.late_cuts));
    resumed_ = true;
  }
  if (parallel) {
    // Same run on every rank (a checkpoint every rank sees), then rank 0's exact values.
    std::vector<int64_t> same = {resumed_ ? 1 : 0, state_.step, state_.epoch};
    for (const auto& p : net.parameters()) same.push_back(p.numel());
    parallel->require_same(same, "where the run starts (resumed or not, step, epoch, parameter sizes)");
    parallel->broadcast(net);
  }
  net.train();
}

Trainer::~Trainer() = default;

void Trainer::notice(const std::string& text) const {
  if (options_.on_notice) options_.on_notice(text);
}

bool Trainer::finished() const {
  return state_.epoch >= config_.epochs ||
         (config_.max_steps > 0 && state_.step >= config_.max_steps);
}

bool Trainer::late_due() const {
  const auto& l = config_.late;
  if (!l.enabled || state_.late) return false;
  return l.start_step > 0 ? state_.step >= l.start_step : state_.epoch >= l.start_epoch;
}

OptimizerConfig Trainer::stage_rates() const {
  auto rates = config_.optimizer;
  if (state_.late && config_.late.lr_ranks > 0) rates.lr_ranks = config_.late.lr_ranks;
  return rates;
}

void Trainer::start_late() {
  const auto exact = static_cast<double>(model_size(model()).tensorized);
  objective_->start_late(exact);
  state_.late = true;
  state_.size_target = objective_->size_target();
  if (config_.late.control == LateControl::Cut)
    cuts_ = std::make_unique<LateCuts>(config_.late, state_.initial_size);
}

void Trainer::truncate() { truncate_model(model(), optimizer_.get(), config_.truncation.fold); }

void Trainer::truncate_unless_trying() {
  if (!cuts_ || !cuts_->pending()) truncate();
}

void Trainer::report(const CutDecision& decision) const {
  for (const auto& text : decision.notices) notice(text);
}

bool Trainer::save() {
  if (options_.checkpoint.empty()) return true;
  // The ranks' parameters are identical: the check below agrees on every rank, rank 0 writes.
  {
    at::NoGradGuard no_grad;
    std::vector<at::Tensor> finite;
    for (const auto& p : model().parameters()) finite.push_back(at::isfinite(p).all());
    if (!finite.empty() && !at::stack(finite).all().item<bool>()) return false;
  }
  if (cuts_) state_.late_cuts = cuts_->state().to_json();
  state_.elapsed_s = elapsed();
  if (!options_.parallel || options_.parallel->world().is_root())
    save_checkpoint(options_.checkpoint, model(), *optimizer_, state_,
                    identity_of(model_spec_, config_, data_), generator_);
  saved_step_ = state_.step;
  return true;
}

double Trainer::elapsed() const { return elapsed_before_ + seconds_since(run_start_); }

bool Trainer::at_late_start() const {
  const auto& l = config_.late;
  return l.enabled && l.start_step == 0 && !state_.late && state_.step_in_epoch == 0 &&
         state_.epoch == l.start_epoch;
}

void Trainer::keep_early_stage(double recorded_s) {
  const auto& copy = options_.early_stage_copy;
  if (copy.empty() || options_.checkpoint.empty() || std::filesystem::exists(copy)) return;
  if (options_.parallel && !options_.parallel->world().is_root()) return;
  auto state = state_;
  state.elapsed_s = recorded_s;
  try {
    save_checkpoint(copy, model(), *optimizer_, state, identity_of(model_spec_, config_, data_), generator_);
  } catch (const std::exception& e) {
    // The run itself is whole; only the sharing is lost.
    notice("the early stage's copy " + copy + " could not be written (" + error_message(e) +
           "); trials toward other late-stage settings train their own");
  }
}

std::string Trainer::kept_checkpoint() const {
  if (options_.checkpoint.empty()) return "this run writes no checkpoint";
  if (saved_step_ < 0) return "no checkpoint was written (" + options_.checkpoint + " does not hold this run)";
  return "checkpoint " + options_.checkpoint + " (step " + std::to_string(saved_step_) +
         ", the last with finite parameters) is kept";
}

void Trainer::restart_memory_peaks() {
  reset_peak_rss();
  tensor_memory_ = CpuMemoryMeter();
  if (!device_.is_cpu()) device_memory_.emplace(device_);
}

EpochMetrics Trainer::epoch_metrics(bool partial, int64_t batches, double elapsed_s) {
  EpochMetrics m;
  m.epoch = state_.epoch;
  m.step = state_.step;
  m.stage = state_.late ? "late" : "early";
  m.partial = partial;
  if (partial) m.epoch_fraction = static_cast<double>(state_.step_in_epoch) / static_cast<double>(batches);
  const double n = static_cast<double>(std::max<int64_t>(1, state_.examples));
  m.train_loss = state_.loss_sum / n;
  m.train_accuracy = static_cast<double>(state_.correct) / n;
  const auto eval = evaluate(*task_, *data_.eval, config_.eval_batch_size, device_, options_.parallel,
                             config_.precision);
  m.eval_loss = eval.loss;
  m.accuracy = eval.accuracy;
  m.eval_metrics = eval.metrics;
  {
    at::NoGradGuard no_grad;
    m.surrogate = state_.size_scale > 0
                      ? surrogate_size(model(), config_.size_surrogate).item<double>() / state_.size_scale
                      : 0;
  }
  m.size = model_size(model());
  for (const auto& layer : m.size.layers)
    if (std::find(layer.ranks.begin(), layer.ranks.end(), 0) != layer.ranks.end() &&
        lost_layers_.insert(layer.name).second)
      notice("layer " + layer.name + " lost every rank of a bond (ranks " + join_list(layer.ranks) +
             "): its output is zero from here on, so the model can no longer use it " +
             (state_.late || config_.early.gamma > 0
                  ? "(less size pressure keeps it: a larger S0 or L0, a smaller gamma)"
                  : "(no size term acts: the task loss moved a rank vector under the model's "
                    "rank_threshold; a smaller rank_threshold, optimizer.lr_ranks 0 or fixed ranks keep it)"));
  if (state_.steps > 0) {
    m.step_time_ms = 1e3 * state_.step_seconds / static_cast<double>(state_.steps);
    m.tokens_per_s = static_cast<double>(state_.tokens) / std::max(1e-9, state_.step_seconds);
  }
  if (const auto* parallel = options_.parallel; parallel && state_.steps > 0) {
    m.ranks = parallel->size();
    m.all_reduce_ms = 1e3 * (parallel->gradient_seconds() - all_reduce_seconds_at_epoch_) /
                      static_cast<double>(state_.steps);
    m.all_reduce_mb = static_cast<double>(parallel->gradient_bytes()) / 1e6;
  }
  if (device_memory_) {  // the GPU's caching allocator, all live tensors counted as on the CPU
    const auto peak = device_memory_->peak();
    m.peak_mem_mb = static_cast<double>(peak.reserved) / 1e6;
    m.peak_tensor_mb = static_cast<double>(peak.allocated) / 1e6;
  } else {
    m.peak_mem_mb = static_cast<double>(std::max<int64_t>(0, peak_rss_bytes() - memory_baseline_)) / 1e6;
    m.peak_tensor_mb = static_cast<double>(tensor_memory_.peak_bytes()) / 1e6;
  }
  m.elapsed_s = elapsed_s;
  if (state_.late) {
    m.loss_target = config_.late.loss_target;
    m.size_target = state_.size_target * state_.initial_size;
  }
  return m;
}

TrainingProgress Trainer::progress(int64_t batches, int64_t end_step) const {
  TrainingProgress p;
  p.epoch = state_.epoch;
  p.epochs = config_.epochs;
  p.stage = state_.late ? "late" : "early";
  p.step_in_epoch = state_.step_in_epoch;
  p.batches = batches;
  p.eval_examples = data_.eval->size();
  const double n = static_cast<double>(std::max<int64_t>(1, state_.examples));
  p.loss = state_.loss_sum / n;
  p.accuracy = static_cast<double>(state_.correct) / n;
  const auto size = model_size(task_->model());
  p.params = size.total_params;
  p.compression = size.compression();
  p.seconds_per_step = state_.steps > 0 ? state_.step_seconds / static_cast<double>(state_.steps) : 0;
  p.seconds_left = p.seconds_per_step * static_cast<double>(std::max<int64_t>(0, end_step - state_.step));
  return p;
}

RunResult Trainer::run() {
  const FastKernelsGuard kernels(options_.fast_kernels);
  const DropoutSeeds seeds(generator_);
  RunResult result;
  run_start_ = Clock::now();
  elapsed_before_ = state_.elapsed_s;
  auto last_progress = run_start_;
  const int64_t batches = (data_.train->size() + config_.batch_size - 1) / config_.batch_size;
  int64_t total_steps = batches * config_.epochs;
  if (config_.max_steps > 0) total_steps = std::min(total_steps, config_.max_steps);
  const int64_t end_step =
      options_.stop_at_step > 0 ? std::min(total_steps, options_.stop_at_step) : total_steps;
  const auto& trunc = config_.truncation;
  auto diverged = [&](const std::string& what) {
    result.status = RunStatus::Diverged;
    result.message = what + "; " + kept_checkpoint() +
                     " (lower the learning rates or set training.clip_grad_norm)";
    result.steps = state_.step;
    return result;
  };
  auto& generator = generator_;
  restart_memory_peaks();
  bool agreed_stop = false;
  if (options_.parallel && (options_.stop_after_epoch || options_.stop_at_check))
    throw Error("a data-parallel run cannot be stopped after an epoch or a check by one rank's decision: "
                "leave stop_after_epoch and stop_at_check unset with training.nproc > 1");
  if (options_.parallel) all_reduce_seconds_at_epoch_ = options_.parallel->gradient_seconds();

  while (state_.epoch < config_.epochs) {
    auto* parallel = options_.parallel;
    const Shard shard = parallel ? Shard{parallel->rank(), parallel->size()} : Shard{};
    // A resumed run skips the batches its epoch already trained on.
    const auto stream = data_.train->batches(config_.batch_size, epoch_seed(config_.seed, state_.epoch),
                                             state_.step_in_epoch, shard);
    bool stop = false, interrupted = false;
    std::optional<EpochMetrics> checked;  // the check that stopped the run
    Batch host_batch;
    while (state_.step_in_epoch < batches) {
      // Data-parallel ranks stop where they agreed to (the previous step's all-reduce carries
      // each rank's request), so none waits in a collective for a rank that has left.
      const bool asked = (options_.stop && options_.stop->load()) || (options_.lost && options_.lost->load());
      if (parallel ? agreed_stop : asked) {
        interrupted = true;
        break;
      }
      if ((config_.max_steps > 0 && state_.step >= config_.max_steps) ||
          (options_.stop_at_step > 0 && state_.step >= options_.stop_at_step)) {
        stop = true;
        break;
      }
      if (late_due()) start_late();
      set_learning_rates(*optimizer_, stage_rates(),
                         lr_factor(config_.schedule, state_.step, total_steps));
      // A stream that skipped malformed lines ends before `batches`.
      if (!stream->next(host_batch)) break;
      if (const int64_t length = config_.length_at(state_.epoch, state_.step); length > 0)
        host_batch = task_->cut_to_length(std::move(host_batch), length);
      const auto t0 = Clock::now();
      // Data-parallel ranks draw corruption and dropout from a stream of their own per step:
      // decorrelated across ranks, and the same again after a resume.
      if (parallel) generator.set_current_seed(step_seed(config_.seed, state_.step, parallel->rank()));
      const auto batch = task_->prepare(std::move(host_batch), generator).to(device_);
      StepResult r;
      try {
        r = training_step(*task_, *optimizer_, *objective_, config_.clip_grad_norm, batch, parallel, asked,
                          config_.precision);
      } catch (const LostRank& e) {
        // The step failed before its update: the model is that of the last step, consistent.
        if (!parallel->world().is_root() || !save()) throw;
        throw LostRank(std::string(e.what()) +
                       (options_.checkpoint.empty() ? std::string(" (no checkpoint: start afresh)")
                                                    : "; checkpoint " + options_.checkpoint +
                                                          " holds step " + std::to_string(state_.step)));
      }
      agreed_stop = agreed_stop || r.stop;
      const double seconds = seconds_since(t0);
      if (!r.finite)
        return diverged("the objective became " + std::to_string(r.objective) + " at epoch " +
                        std::to_string(state_.epoch) + ", step " + std::to_string(state_.step + 1));
      ++state_.step;
      ++state_.step_in_epoch;
      ++state_.steps;
      state_.loss_sum += r.task_loss * static_cast<double>(r.predictions);
      state_.examples += r.predictions;
      state_.correct += r.correct;
      state_.tokens += r.tokens;
      state_.step_seconds += seconds;
      if (cuts_) {
        cuts_->hold(model());
        if (cuts_->record(r.task_loss))
          report(cuts_->decide(model(), *optimizer_, state_.size_target, trunc.fold));
      }
      if (trunc.when == TruncateWhen::Steps && state_.step % trunc.every_steps == 0) truncate_unless_trying();
      if (config_.checkpoint_every_steps > 0 && state_.step % config_.checkpoint_every_steps == 0 &&
          !save())
        return diverged("the parameters became non-finite by step " + std::to_string(state_.step));
      if (options_.on_progress && seconds_since(last_progress) >= options_.progress_interval_s) {
        last_progress = Clock::now();
        options_.on_progress(progress(batches, end_step));
      }
      if (options_.on_step) options_.on_step();
      if (options_.stop_at_check && options_.checks.due(state_.epoch, state_.step_in_epoch, batches, state_.late)) {
        auto m = epoch_metrics(true, batches, elapsed());
        if (!std::isfinite(m.eval_loss))
          return diverged("the evaluation at step " + std::to_string(state_.step) + " gave a non-finite loss (" +
                          std::to_string(m.eval_loss) + ")");
        if (options_.stop_at_check(m)) {
          checked = std::move(m);
          stop = true;
          break;
        }
      }
    }
    if (interrupted) {
      // Promptly: the checkpoint, not the epoch's evaluation.
      if (!save()) return diverged("the parameters became non-finite by step " + std::to_string(state_.step));
      result.status = RunStatus::Interrupted;
      result.steps = state_.step;
      result.message = "interrupted at step " + std::to_string(state_.step) +
                       (options_.checkpoint.empty() ? std::string(" (no checkpoint: start afresh)")
                                                    : "; resume from " + options_.checkpoint);
      return result;
    }
    const bool partial = stop && state_.step_in_epoch < batches;
    if (stop && state_.step_in_epoch == 0) break;  // the limit fell on an epoch boundary
    // The run's end judges a cut still on trial: the model it leaves has no unjudged cut. Its
    // end is the last epoch's, or training.max_steps' even inside an epoch; a stop a resume
    // goes on from judges nothing, so the resumed run follows the uninterrupted one exactly.
    if (cuts_ && ((!partial && state_.epoch + 1 >= config_.epochs) ||
                  (config_.max_steps > 0 && state_.step >= config_.max_steps)))
      report(cuts_->resolve(model(), *optimizer_, state_.size_target, trunc.fold));
    if (trunc.when == TruncateWhen::Epoch && !partial) truncate_unless_trying();
    if (options_.on_progress) {
      auto p = progress(batches, end_step);
      p.evaluating = true;
      options_.on_progress(p);
    }
    auto metrics = checked ? std::move(*checked) : epoch_metrics(partial, batches, elapsed());
    if (!std::isfinite(metrics.eval_loss) || !std::isfinite(metrics.train_loss))
      return diverged("epoch " + std::to_string(state_.epoch + 1) + " ended with a non-finite loss (train " +
                      std::to_string(metrics.train_loss) + ", eval " + std::to_string(metrics.eval_loss) + ")");
    if (!partial) {
      ++state_.epoch;
      state_.step_in_epoch = 0;
      state_.loss_sum = state_.step_seconds = 0;
      state_.examples = state_.correct = state_.tokens = state_.steps = 0;
    }
    // The epoch is reported (recorded) before its checkpoint: a kill between the two then reruns
    // the epoch from the previous checkpoint and replaces its row, where the other order would
    // resume past an epoch that was never recorded.
    if (options_.on_epoch) options_.on_epoch(metrics);
    if (!save())
      return diverged("the parameters became non-finite by step " + std::to_string(state_.step));
    if (!partial && at_late_start()) keep_early_stage(metrics.elapsed_s);
    result.epochs.push_back(std::move(metrics));
    restart_memory_peaks();
    if (parallel) all_reduce_seconds_at_epoch_ = parallel->gradient_seconds();
    if (stop || (options_.stop_after_epoch && options_.stop_after_epoch(result.epochs.back()))) break;
  }
  // No rank leaves (taking rank 0's rendezvous store with it) before all are done.
  if (options_.parallel) options_.parallel->barrier();
  result.steps = state_.step;
  const bool done = finished();
  result.status = done ? RunStatus::Completed : RunStatus::StepLimit;
  result.message = done ? "completed " + std::to_string(state_.step) + " steps"
                        : "stopped after " + std::to_string(state_.step) +
                              " steps (resume to continue)";
  return result;
}

}  // namespace comera
