#pragma once
// Checkpoints of a training run: model, optimiser, RNG, stage, epoch and step, and every
// tensorized layer's ranks, so a resume first rebuilds truncated shapes and then loads.
// Written to a temporary file and renamed, so a kill never leaves a half-written checkpoint.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace torch::nn {
class Module;
}
namespace torch::optim {
class AdamW;
}
namespace torch::serialize {
class InputArchive;
}

namespace comera {

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

  nlohmann::json to_json() const;
  static TrainerState from_json(const nlohmann::json& j);
};

// identity: what must match on resume (model and training configs); stored verbatim.
void save_checkpoint(const std::string& path, torch::nn::Module& model,
                     torch::optim::AdamW& optimizer, const TrainerState& state,
                     const nlohmann::json& identity);

// Where the dense build of an experiment keeps its checkpoint, given the tensorized build's:
// results/checkpoints/X.pt -> results/checkpoints/X_dense.pt (the `--dense` naming), so a
// dense baseline initialises from the dense pre-training run.
std::string dense_checkpoint_path(const std::string& path);

class Checkpoint {
 public:
  // Throws comera::Error naming the file and `fix` when it is missing or not a comera
  // checkpoint.
  explicit Checkpoint(const std::string& path,
                      const std::string& fix = "run without --resume, or delete it, to start afresh");
  const std::string& path() const { return path_; }
  const TrainerState& state() const { return state_; }
  const nlohmann::json& identity() const { return identity_; }
  // Rebuilds the saved ranks, then loads parameters and buffers.
  void load_model(torch::nn::Module& model) const;
  // Initialises a new run's model from this one (pre-training -> fine-tuning): the model's
  // embeddings and encoders take the checkpoint's ranks and values; the heads (classification,
  // masked LM) keep their fresh initialisation. The model settings other than the heads and
  // dropout must match the checkpoint's. Returns the number of tensors loaded.
  int64_t init_model(torch::nn::Module& model, const nlohmann::json& model_config) const;
  // The optimiser must have been built on the model after load_model.
  void load_optimizer(torch::optim::AdamW& optimizer) const;
  // The global CPU generator (dropout) continues where it was.
  void restore_rng() const;

 private:
  std::string path_;
  std::shared_ptr<torch::serialize::InputArchive> archive_;
  TrainerState state_;
  nlohmann::json identity_;
  std::map<std::string, std::vector<int64_t>> ranks_;
};

}  // namespace comera
