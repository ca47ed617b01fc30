#pragma once
// What the trainer measures at the end of each epoch (and at an early stop).
#include "core/layers/size.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace comera {

struct EpochMetrics {
  int64_t epoch = 0;  // 0-based
  int64_t step = 0;   // optimiser steps so far
  std::string stage;  // "early" | "late"
  bool partial = false;  // the run stopped inside this epoch (or this is a check inside it)
  double epoch_fraction = 1;  // of the epoch's steps done
  double train_loss = 0;  // task loss, mean per training example of the epoch
  double train_accuracy = 0;
  double eval_loss = 0;   // mean per evaluation example
  double accuracy = 0;    // evaluation accuracy
  double surrogate = 0;   // in units of its initial value
  ModelSize size;         // exact sizes and effective ranks per layer
  double step_time_ms = 0;  // mean wall time of a training step
  double tokens_per_s = 0;  // non-padding tokens
  double peak_mem_mb = 0;   // peak RSS above the idle baseline during the epoch
  // Peak bytes of live CPU tensors during the epoch (parameters, gradients, optimiser state,
  // activations, batches): what a GPU allocator's peak reports, free of heap caching. Counts
  // the tensors allocated since count_cpu_tensor_memory() (core/util/memory_meter.h).
  double peak_tensor_mb = 0;
  double elapsed_s = 0;     // training so far, over every process that ran it (TrainerState::elapsed_s)
  // Late stage only (0 before): the targets L0 and S0 (exact core entries) the epoch worked
  // toward, so a report can say how far from S0 the trial ended.
  double loss_target = 0;
  double size_target = 0;
  // Data-parallel runs (ranks > 1): the gradient all-reduce's mean seconds and bytes per step.
  int64_t ranks = 1;
  double all_reduce_ms = 0;
  double all_reduce_mb = 0;
  // Evaluation metrics only some tasks have, by name (EvalResult::metrics): "auc".
  std::map<std::string, double> eval_metrics;

  nlohmann::json to_json() const;
};

}  // namespace comera
