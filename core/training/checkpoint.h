#pragma once
// Checkpoints of a training run: model, optimiser, RNG, stage, epoch and step, and every
// tensorized layer's ranks, so a resume first rebuilds truncated shapes and then loads.
// Written to a temporary file and renamed, so a kill never leaves a half-written checkpoint.
#include <ATen/core/Generator.h>
#include <c10/core/Device.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace torch::nn {
class Module;
}
namespace torch::optim {
class Optimizer;
}
namespace torch::serialize {
class InputArchive;
}

namespace comera {

struct ModelSpec;

struct TrainerState {
  int64_t epoch = 0;          // epoch in progress (0-based)
  int64_t step = 0;           // optimiser steps done
  int64_t step_in_epoch = 0;  // batches of `epoch` done
  bool late = false;
  double size_scale = 0;      // surrogate at initialisation
  double initial_size = 0;    // exact core entries at initialisation
  double size_target = 0;     // late stage S0, in units of initial_size
  // Sums over the batches of the epoch in progress.
  double loss_sum = 0, step_seconds = 0;
  int64_t examples = 0, correct = 0, tokens = 0, steps = 0;
  nlohmann::json late_cuts;   // LateCutState of a cut-controlled late stage; null otherwise
  // Seconds of training up to this state, summed over the processes that ran it (a kill loses
  // those after the last checkpoint).
  double elapsed_s = 0;

  nlohmann::json to_json() const;
  static TrainerState from_json(const nlohmann::json& j);
};

// identity: what must match on resume (model and training configs); stored verbatim.
// generator: the run's (a CPU generator), whose state a resume continues from.
void save_checkpoint(const std::string& path, torch::nn::Module& model,
                     torch::optim::Optimizer& optimizer, const TrainerState& state,
                     const nlohmann::json& identity, const at::Generator& generator);

// A copy of the checkpoint at `from`, written as save_checkpoint writes.
void copy_checkpoint(const std::string& from, const std::string& to);

// Where the dense build of an experiment keeps its checkpoint, given the tensorized build's:
// results/checkpoints/X.pt -> results/checkpoints/X_dense.pt (the `--dense` naming), so a
// dense baseline initialises from the dense pre-training run.
std::string dense_checkpoint_path(const std::string& path);

class Checkpoint {
 public:
  static constexpr const char* kStartAfresh = "delete it, or give another --checkpoint, to start afresh";
  // Throws comera::Error naming the file and `fix` when it is missing or not a comera
  // checkpoint. Its tensors are read onto `device`.
  explicit Checkpoint(const std::string& path, const std::string& fix = kStartAfresh,
                      const c10::Device& device = c10::Device(c10::kCPU));
  const std::string& path() const { return path_; }
  const TrainerState& state() const { return state_; }
  const nlohmann::json& identity() const { return identity_; }
  // Rebuilds the saved ranks, then loads parameters and buffers.
  void load_model(torch::nn::Module& model) const;
  // Initialises a new run's model from this one (pre-training -> fine-tuning): every tensor
  // but the heads' (is_head, by module path) takes the checkpoint's ranks and values; the heads
  // keep their fresh initialisation. The model kind and its settings but heads and dropout
  // (ModelKind::body) must match the checkpoint's. Returns the number of tensors loaded.
  int64_t init_model(torch::nn::Module& model, const ModelSpec& spec,
                     const std::function<bool(const std::string&)>& is_head) const;
  // The optimiser must have been built on the model after load_model.
  void load_optimizer(torch::optim::Optimizer& optimizer) const;
  // The run's generator (masked-LM corruption, dropout seeds) continues where it was.
  void restore_rng(at::Generator& generator) const;

 private:
  std::string path_;
  std::shared_ptr<torch::serialize::InputArchive> archive_;
  TrainerState state_;
  nlohmann::json identity_;
  std::map<std::string, std::vector<int64_t>> ranks_;
};

}  // namespace comera
