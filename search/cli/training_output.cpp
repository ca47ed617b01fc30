#include "search/cli/training_output.h"

#include "core/util/format.h"

#include <unistd.h>

#include <cstdio>
#include <iostream>

namespace comera::cli {

ProgressLine::ProgressLine(bool live, bool lines)
    : live_(live), lines_(lines), tty_(isatty(fileno(stderr)) != 0) {}

bool ProgressLine::due() const {
  const auto every = tty_ ? std::chrono::milliseconds(200) : std::chrono::milliseconds(10000);
  return std::chrono::steady_clock::now() - last_ >= every;
}

void ProgressLine::update(const std::string& text, bool force) {
  if (!live_ || (!force && !due())) return;
  last_ = std::chrono::steady_clock::now();
  if (tty_) {
    std::string padded = text;
    if (padded.size() < width_) padded.resize(width_, ' ');
    width_ = text.size();
    std::cerr << '\r' << padded << std::flush;
  } else {
    std::cerr << text << std::endl;
  }
}

void ProgressLine::finish(const std::string& text) {
  if (!lines_) return;
  if (live_ && tty_) {
    update(text, true);
    std::cerr << std::endl;
    width_ = 0;
  } else {
    std::cerr << text << std::endl;
  }
  last_ = {};
}

std::string progress_text(const TrainingProgress& p) {
  if (p.evaluating)
    return "epoch " + std::to_string(p.epoch + 1) + ": evaluating on " +
           std::to_string(p.eval_examples) + " examples...";
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "epoch %lld/%lld [%s] step %lld/%lld  loss %.4f  acc %.1f%%  size %s (%.1fx)  "
                "%.0f ms/step  left %s",
                static_cast<long long>(p.epoch + 1), static_cast<long long>(p.epochs), p.stage.c_str(),
                static_cast<long long>(p.step_in_epoch), static_cast<long long>(p.batches), p.loss,
                100.0 * p.accuracy, format_count(static_cast<double>(p.params)).c_str(), p.compression,
                1e3 * p.seconds_per_step, format_duration(p.seconds_left).c_str());
  return buf;
}

std::string epoch_text(const EpochMetrics& m) {
  char line[256];
  std::snprintf(line, sizeof line,
                "epoch %lld [%s]%s  train loss %.4f  eval loss %.4f  acc %.2f%%  size %s (%.1fx)  "
                "%.1f ms/step  %.0f tok/s  peak %.0f MB RSS, %.0f MB tensors",
                static_cast<long long>(m.epoch + 1), m.stage.c_str(), m.partial ? " (partial)" : "",
                m.train_loss, m.eval_loss, 100 * m.accuracy,
                format_count(static_cast<double>(m.size.total_params)).c_str(), m.size.compression(),
                m.step_time_ms, m.tokens_per_s, m.peak_mem_mb, m.peak_tensor_mb);
  std::string text = line;
  for (const auto& [name, value] : m.eval_metrics) {
    char extra[64];
    std::snprintf(extra, sizeof extra, "  %s %.4f", name.c_str(), value);
    text += extra;
  }
  return text;
}

void show_training(TrainerOptions& options, ProgressLine& line) {
  options.progress_interval_s = 0.2;
  options.on_progress = [&line](const TrainingProgress& p) { line.update(progress_text(p), p.evaluating); };
  options.on_notice = [&line](const std::string& text) { line.finish(text); };
  options.on_epoch = [&line, next = options.on_epoch](const EpochMetrics& m) {
    line.finish(epoch_text(m));
    if (next) next(m);
  };
}

ClaimedTrialOptions trial_reporting(ProgressLine& line) {
  ClaimedTrialOptions r;
  r.on_message = [&line](const std::string& text) { line.finish(text); };
  r.configure_trainer = [&line](TrainerOptions& options) { show_training(options, line); };
  r.program = "/proc/self/exe";
  return r;
}

}  // namespace comera::cli
