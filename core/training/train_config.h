#pragma once
// Settings of the bi-objective trainer (METHOD §3): optimiser groups, schedule, the two
// objective stages, rank truncation and checkpoints.
#include "core/layers/size.h"
#include "core/models/task.h"
#include "core/util/precision.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace comera {

class ConfigReader;

enum class ScheduleKind { Constant, Linear, Cosine };

struct OptimizerConfig {
  std::string kind = "adamw";  // a registered optimiser kind (optimizer_kind.h)
  // Learning rates per group (the authors' AdamW run, METHOD §3).
  double lr_cores = 1e-4, lr_ranks = 1e-3, lr_other = 5e-5;
  double weight_decay = 0;
  // The kind's own settings (AdamW's betas, SGD's momentum, GaLore's rank, ...); keys left out
  // take the kind's defaults.
  nlohmann::json settings = nlohmann::json::object();

  // Cores, rank vectors, other.
  std::vector<double> rates() const { return {lr_cores, lr_ranks, lr_other}; }
  // The kind's settings complete, defaults filled in; errors name the key and the fix.
  nlohmann::json complete_settings() const;
};

struct ScheduleConfig {
  ScheduleKind kind = ScheduleKind::Constant;
  int64_t warmup_steps = 0;
  double min_factor = 0;  // linear / cosine decay floor, as a fraction of the peak
};

// Early stage: L + gamma * S_hat + beta * sum ||G||^2 (S_hat in units of its initial value).
struct EarlyStageConfig {
  double gamma = 0.01, beta = 0;
};

// Late stage: max{w1 (L - L0), w2 (S_hat - S0)} + rho (L + S_hat), S in the same scaled units.
// How the late stage moves toward its target. Gradient: the paper's, the max-gap objective's
// gradient drives the rank vectors and thresholding cuts. Cut: the task loss alone trains, and
// every cut_every_steps the trainer cuts the weakest slices while the size gap binds, keeping a
// cut only if the objective measured over the next window is no worse (late_cuts.h).
enum class LateControl { Gradient, Cut };

struct LateStageConfig {
  bool enabled = false;
  LateControl control = LateControl::Gradient;
  int64_t cut_every_steps = 100;  // Cut: steps per decision window
  double cut_fraction = 0.5;      // Cut: share of the gap difference one cut may close
  int64_t start_epoch = 0;  // 0-based epoch at whose start the late stage begins
  int64_t start_step = 0;   // or a global step (takes precedence when > 0)
  double loss_target = 0.8;  // L0
  double size_target = 0;    // S0 in core entries, when > 0
  double size_ratio = 0.2;   // else S0 = ratio * exact size at the end of the early stage
  double omega_loss = 1, omega_size = 1, rho = 0.01;
  // > 0: the rank vectors' learning rate from the start of the late stage (reaching S0 takes
  // ranks that move faster than early-stage learning tolerates); 0 = optimizer.lr_ranks.
  double lr_ranks = 0;
};

enum class TruncateWhen { Never, Epoch, Steps };

struct TruncationConfig {
  TruncateWhen when = TruncateWhen::Epoch;
  int64_t every_steps = 0;  // for Steps
  bool fold = false;        // fold d into the cores after cutting (METHOD §3)
};

// A phase of training at a sequence length (BERT pre-trains at 128 tokens, then at 512): from
// its start on, every training batch is cut to its first max_length tokens. It starts at
// start_step (global, when > 0) or else at the start of epoch start_epoch (0-based).
struct LengthPhase {
  int64_t start_epoch = 0, start_step = 0;
  int64_t max_length = 0;
};

struct TrainConfig {
  // What the model is trained for; the model kind says which tasks it supports.
  TaskSpec task;
  // Where the run computes: "cpu" or a LibTorch device string ("cuda", "cuda:1").
  std::string device = "cpu";
  // Data-parallel ranks that `comera train` starts on this host (c10d, core/distributed); each
  // trains on batch_size / nproc examples of every batch. 1: one process, or as many as the
  // environment names when a launcher (torchrun, srun) started it.
  int64_t nproc = 1;
  // How TT layers contract (METHOD §4): "stored" (the tuner's stored choice per layer, else
  // merged), "tuned" (measured where none is stored), "merged", "core-by-core", "reconstruct".
  std::string contraction = "stored";
  // fp32, or bf16 mixed precision (core/util/precision.h); CPU only so far.
  Precision precision = Precision::Fp32;
  // A checkpoint (e.g. of a masked-LM pre-training run) whose embeddings and encoders start
  // this run; the heads start fresh. "" = random initialisation.
  std::string init_from;
  int64_t epochs = 30;
  int64_t batch_size = 32;
  int64_t eval_batch_size = 64;
  int64_t max_steps = 0;  // 0: no limit
  uint64_t seed = 0;
  double clip_grad_norm = 0;  // 0: off
  SurrogateKind size_surrogate = SurrogateKind::Weighted;
  OptimizerConfig optimizer;
  ScheduleConfig schedule;
  EarlyStageConfig early;
  LateStageConfig late;
  TruncationConfig truncation;
  int64_t checkpoint_every_steps = 0;  // 0: at epoch ends only
  // In order of their starts, the first at step 0; empty = batches as the data makes them.
  std::vector<LengthPhase> length_phases;
  // Every tensorized layer's ranks (boundary 1s included), by module name: the model starts at
  // them, freshly initialised, and keeps them (no size terms, no late stage, no truncation, the
  // rank vectors not learnt). The ablation against rank adaptation; empty = off.
  std::map<std::string, std::vector<int64_t>> fixed_ranks;

  nlohmann::json to_json() const;
  // The sequence-length cap at `epoch` (0-based) and global `step`; 0 = none.
  int64_t length_at(int64_t epoch, int64_t step) const;
};

TrainConfig read_train_config(const ConfigReader& reader);
// A TrainConfig::to_json without the late-stage settings that act only once it has begun (all of
// late_stage but its start): what training up to the late stage's start depends on.
nlohmann::json before_late(nlohmann::json training);
// The task part of a training section alone (also of a checkpoint's stored TrainConfig::to_json).
TaskSpec read_task_spec(const ConfigReader& training);

}  // namespace comera
