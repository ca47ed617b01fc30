#include "core/training/trainer.h"

#include "core/layers/size.h"
#include "core/training/lr_schedule.h"
#include "core/training/optimizer.h"
#include "core/training/progress.h"
#include "core/training/rank_truncation.h"
#include "core/training/training_step.h"
#include "core/util/error.h"
#include "core/util/memory.h"

#include <ATen/ATen.h>
#include <torch/optim/adamw.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>

namespace comera {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The shuffle seed of one epoch: a fixed function of (seed, epoch), so a resumed run visits
// the batches in the same order.
uint64_t epoch_seed(uint64_t seed, int64_t epoch) {
  return seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(epoch) + 1;
}

nlohmann::json identity_of(const ModelConfig& model, const TrainConfig& training) {
  return {{"model", model.to_json()}, {"training", training.to_json()}};
}

std::string format_count(double n) {
  char buf[32];
  if (n >= 1e6)
    std::snprintf(buf, sizeof buf, "%.2fM", n / 1e6);
  else if (n >= 1e3)
    std::snprintf(buf, sizeof buf, "%.1fk", n / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.0f", n);
  return buf;
}

}  // namespace

const char* run_status_name(RunStatus status) {
  switch (status) {
    case RunStatus::Completed: return "completed";
    case RunStatus::StepLimit: return "step_limit";
    case RunStatus::Diverged: return "diverged";
  }
  return "";
}

Trainer::Trainer(ModelConfig model, TrainConfig training, const PairDataset& train,
                 const PairDataset& eval, TrainerOptions options)
    : model_config_(std::move(model)),
      config_(std::move(training)),
      train_(train),
      eval_(eval),
      options_(std::move(options)) {
  memory_baseline_ = options_.memory_baseline >= 0 ? options_.memory_baseline : idle_rss_bytes();
  if (train_.size() == 0) throw Error("the training set is empty (check the data directory)");
  task_.kind = config_.task;
  if (config_.task == TaskKind::MaskedLM) {
    if (!model_config_.masked_lm)
      throw Error("training.task masked_lm needs a masked-LM head: set model.masked_lm: true");
    if (options_.masking.mask_id < 0)
      throw Error("masked-LM training needs a vocabulary with a [MASK] token (use a BERT vocab.txt)");
    task_.masking = options_.masking;
    task_.masking.probability = config_.mask_probability;
  }
  at::manual_seed(config_.seed);
  model_ = Transformer(model_config_);
  // Size units come from the freshly initialised model (all d = 1).
  {
    at::NoGradGuard no_grad;
    state_.size_scale = surrogate_size(*model_, config_.size_surrogate).item<double>();
    state_.initial_size = static_cast<double>(model_size(*model_).tensorized);
  }
  const bool resume = options_.resume && !options_.checkpoint.empty() &&
                      std::filesystem::exists(options_.checkpoint);
  std::unique_ptr<Checkpoint> checkpoint;
  if (resume) {
    checkpoint = std::make_unique<Checkpoint>(options_.checkpoint);
    const auto expected = identity_of(model_config_, config_);
    if (checkpoint->identity().at("model") != expected.at("model"))
      throw Error("checkpoint " + options_.checkpoint +
                  " was made with a different model config (resume with the same config, or "
                  "delete the checkpoint to start afresh)");
    if (checkpoint->identity().at("training") != expected.at("training"))
      std::cerr << "comera train: warning: the training settings differ from those of checkpoint "
                << options_.checkpoint << "; continuing with the new ones\n";
    checkpoint->load_model(*model_);
  } else if (!config_.init_from.empty()) {
    const Checkpoint start(config_.init_from,
                           "training.init_from: run the experiment that writes it first, e.g. the "
                           "masked-LM pre-training preset, or point init_from elsewhere");
    const auto loaded = start.init_model(*model_, model_config_.to_json());
    if (options_.log_epochs)
      std::cerr << "initialised from " << config_.init_from << ": " << loaded
                << " tensors (embeddings and encoders); heads start fresh\n";
  }
  optimizer_ = make_optimizer(*model_, config_.optimizer);
  objective_ = std::make_unique<Objective>(config_.size_surrogate, config_.early, config_.late,
                                           state_.size_scale, state_.initial_size);
  if (resume) {
    checkpoint->load_optimizer(*optimizer_);
    checkpoint->restore_rng();
    state_ = checkpoint->state();
    objective_ = std::make_unique<Objective>(config_.size_surrogate, config_.early, config_.late,
                                             state_.size_scale, state_.initial_size);
    if (state_.late) objective_->resume_late(state_.size_target);
    resumed_ = true;
  }
  model_->train();
}

Trainer::~Trainer() = default;

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
  const auto exact = static_cast<double>(model_size(*model_).tensorized);
  objective_->start_late(exact);
  state_.late = true;
  state_.size_target = objective_->size_target();
}

void Trainer::save() {
  if (options_.checkpoint.empty()) return;
  save_checkpoint(options_.checkpoint, *model_, *optimizer_, state_,
                  identity_of(model_config_, config_));
}

EpochMetrics Trainer::epoch_metrics(bool partial, double elapsed_s) {
  EpochMetrics m;
  m.epoch = state_.epoch;
  m.step = state_.step;
  m.stage = state_.late ? "late" : "early";
  m.partial = partial;
  const double n = static_cast<double>(std::max<int64_t>(1, state_.examples));
  m.train_loss = state_.loss_sum / n;
  m.train_accuracy = static_cast<double>(state_.correct) / n;
  const auto eval = evaluate(model_, eval_, config_.eval_batch_size, task_);
  m.eval_loss = eval.loss;
  m.accuracy = eval.accuracy;
  {
    at::NoGradGuard no_grad;
    m.surrogate = state_.size_scale > 0
                      ? surrogate_size(*model_, config_.size_surrogate).item<double>() / state_.size_scale
                      : 0;
  }
  m.size = model_size(*model_);
  if (state_.steps > 0) {
    m.step_time_ms = 1e3 * state_.step_seconds / static_cast<double>(state_.steps);
    m.tokens_per_s = static_cast<double>(state_.tokens) / std::max(1e-9, state_.step_seconds);
  }
  m.peak_mem_mb = static_cast<double>(std::max<int64_t>(0, peak_rss_bytes() - memory_baseline_)) / 1e6;
  m.elapsed_s = elapsed_s;
  return m;
}

std::string Trainer::progress_text(int64_t batches, int64_t end_step,
                                   double seconds_per_step) const {
  const auto size = model_size(*model_);
  const double n = static_cast<double>(std::max<int64_t>(1, state_.examples));
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "epoch %lld/%lld [%s] step %lld/%lld  loss %.4f  acc %.1f%%  size %s (%.1fx)  "
                "%.0f ms/step  left %s",
                static_cast<long long>(state_.epoch + 1), static_cast<long long>(config_.epochs),
                state_.late ? "late" : "early", static_cast<long long>(state_.step_in_epoch),
                static_cast<long long>(batches), state_.loss_sum / n,
                100.0 * static_cast<double>(state_.correct) / n,
                format_count(static_cast<double>(size.total_params)).c_str(), size.compression(),
                1e3 * seconds_per_step,
                format_duration(seconds_per_step * static_cast<double>(end_step - state_.step)).c_str());
  return buf;
}

RunResult Trainer::run() {
  RunResult result;
  ProgressLine progress(options_.progress, options_.log_epochs);
  const auto run_start = Clock::now();
  const int64_t batches = (train_.size() + config_.batch_size - 1) / config_.batch_size;
  int64_t total_steps = batches * config_.epochs;
  if (config_.max_steps > 0) total_steps = std::min(total_steps, config_.max_steps);
  const int64_t end_step =
      options_.stop_at_step > 0 ? std::min(total_steps, options_.stop_at_step) : total_steps;
  const auto& trunc = config_.truncation;
  reset_peak_rss();

  while (state_.epoch < config_.epochs) {
    const auto order = train_.epoch(config_.batch_size, epoch_seed(config_.seed, state_.epoch));
    bool stop = false;
    while (state_.step_in_epoch < static_cast<int64_t>(order.size())) {
      if ((config_.max_steps > 0 && state_.step >= config_.max_steps) ||
          (options_.stop_at_step > 0 && state_.step >= options_.stop_at_step)) {
        stop = true;
        break;
      }
      if (late_due()) start_late();
      set_learning_rates(*optimizer_, stage_rates(),
                         lr_factor(config_.schedule, state_.step, total_steps));
      const auto batch = train_.batch(order[state_.step_in_epoch]);
      const auto t0 = Clock::now();
      const auto r = training_step(model_, *optimizer_, *objective_, config_.clip_grad_norm, batch,
                                   task_);
      const double seconds = seconds_since(t0);
      if (!r.finite) {
        result.status = RunStatus::Diverged;
        result.message = "the objective became " + std::to_string(r.objective) + " at epoch " +
                         std::to_string(state_.epoch + 1) + ", step " + std::to_string(state_.step + 1) +
                         (options_.checkpoint.empty()
                              ? std::string()
                              : "; the last good checkpoint " + options_.checkpoint + " is kept") +
                         " (lower the learning rates or set training.clip_grad_norm)";
        progress.finish("stopped: " + result.message);
        result.steps = state_.step;
        return result;
      }
      ++state_.step;
      ++state_.step_in_epoch;
      ++state_.steps;
      state_.loss_sum += r.task_loss * static_cast<double>(r.examples);
      state_.examples += r.examples;
      state_.correct += r.correct;
      state_.tokens += r.tokens;
      state_.step_seconds += seconds;
      if (trunc.when == TruncateWhen::Steps && state_.step % trunc.every_steps == 0)
        truncate_model(*model_, optimizer_.get(), trunc.fold);
      if (config_.checkpoint_every_steps > 0 && state_.step % config_.checkpoint_every_steps == 0)
        save();
      if (progress.due())
        progress.update(progress_text(static_cast<int64_t>(order.size()), end_step,
                                      state_.step_seconds / static_cast<double>(state_.steps)));
      if (options_.on_step) options_.on_step();
    }
    const bool partial = stop && state_.step_in_epoch < static_cast<int64_t>(order.size());
    if (stop && state_.step_in_epoch == 0) break;  // the limit fell on an epoch boundary
    // Not at a partial stop: a resumed run must follow the uninterrupted one exactly.
    if (trunc.when == TruncateWhen::Epoch && !partial)
      truncate_model(*model_, optimizer_.get(), trunc.fold);
    progress.update("epoch " + std::to_string(state_.epoch + 1) + ": evaluating on " +
                        std::to_string(eval_.size()) + " examples...",
                    true);
    auto metrics = epoch_metrics(partial, seconds_since(run_start));
    char line[256];
    std::snprintf(line, sizeof line,
                  "epoch %lld [%s]%s  train loss %.4f  eval loss %.4f  acc %.2f%%  size %s (%.1fx)  "
                  "%.1f ms/step  %.0f tok/s  peak %.0f MB",
                  static_cast<long long>(metrics.epoch + 1), metrics.stage.c_str(),
                  partial ? " (partial)" : "", metrics.train_loss, metrics.eval_loss,
                  100 * metrics.accuracy, format_count(static_cast<double>(metrics.size.total_params)).c_str(),
                  metrics.size.compression(), metrics.step_time_ms, metrics.tokens_per_s,
                  metrics.peak_mem_mb);
    progress.finish(line);
    if (!partial) {
      ++state_.epoch;
      state_.step_in_epoch = 0;
      state_.loss_sum = state_.step_seconds = 0;
      state_.examples = state_.correct = state_.tokens = state_.steps = 0;
    }
    save();
    if (options_.on_epoch) options_.on_epoch(metrics);
    result.epochs.push_back(std::move(metrics));
    reset_peak_rss();
    if (stop) break;
  }
  result.steps = state_.step;
  const bool done = finished();
  result.status = done ? RunStatus::Completed : RunStatus::StepLimit;
  result.message = done ? "completed " + std::to_string(state_.step) + " steps"
                        : "stopped after " + std::to_string(state_.step) +
                              " steps (resume to continue)";
  return result;
}

}  // namespace comera
