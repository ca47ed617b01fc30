#pragma once
// How the CLI shows a training run: a live progress line on stderr (redrawn in place on a
// terminal, every few seconds otherwise) and one summary line per epoch, fed by the trainer's
// callbacks.
#include "core/training/epoch_metrics.h"
#include "core/training/trainer.h"
#include "search/runs/claimed_trial.h"

#include <chrono>
#include <string>

namespace comera::cli {

class ProgressLine {
 public:
  // live: redraw the line as work goes on; lines: print finished lines (both go to stderr).
  ProgressLine(bool live, bool lines);
  // Rate-limited unless `force`.
  void update(const std::string& text, bool force = false);
  // Leaves the line on screen and starts a new one.
  void finish(const std::string& text);

 private:
  bool due() const;

  bool live_, lines_, tty_;
  size_t width_ = 0;
  std::chrono::steady_clock::time_point last_{};
};

std::string progress_text(const TrainingProgress& p);
std::string epoch_text(const EpochMetrics& m);

// Sets the trainer's on_progress and on_notice to draw on `line` (which must outlive the
// run), and chains an epoch line before `options.on_epoch`.
void show_training(TrainerOptions& options, ProgressLine& line);
// A sweep's trials shown the same way, their messages as lines.
ClaimedTrialOptions trial_reporting(ProgressLine& line);

}  // namespace comera::cli
