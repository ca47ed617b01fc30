#pragma once
// The parts of a training step that `comera bench step --profile` times and counts. The model
// code opens a RECORD_USER_SCOPE named scope_name(part) around each part (free when nobody
// observes) and, while counting is on, adds the part's multiply-add work as FLOPs.
#include <cstdint>

namespace comera::step_parts {

enum Part : int {
  kLinear,             // the linear layers (TT or dense), forward and backward
  kAttention,          // the attention core: score and context products, bias, softmax, dropout
  kEmbedding,          // the word-embedding lookup
  kResidualNorm,       // the encoders' residual adds with their dropout, and their layer norms
  kActivation,         // the feed-forward activation (GELU)
  kSizeTerms,          // the model-size terms of the objective
  kOptimizer,          // the optimiser step
  kCount
};

// "comera::linear", ...: static strings (RecordFunction keeps the pointer).
const char* scope_name(Part part);
// "linear layers", ...: for tables.
const char* label(Part part);

// FLOPs are counted only between set_counting(true) and set_counting(false).
bool counting();
void set_counting(bool on);
void add_flops(Part part, double flops);
// The FLOPs counted for the part since the last take, and resets it.
double take_flops(Part part);

}  // namespace comera::step_parts
