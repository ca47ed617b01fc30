#pragma once
// GaLore (Zhao et al. 2024, reference code galore-torch): AdamW whose moments live in a rank-r
// projection of each targeted 2-D weight's gradient. For a weight G of shape (m, n): when
// m >= n, P holds the top-r right singular vectors (r x n) and R = G·Pᵀ; otherwise P holds the
// top-r left ones (m x r) and R = Pᵀ·G. P comes from an SVD of the current gradient at steps
// 0, T, 2T, ... (counted before the step); the moments are kept, not reset, when P changes.
// The Adam direction is projected back and multiplied by `scale`; weight decay acts on the full
// weight. Every other parameter takes a plain AdamW step. Update and bias correction follow
// torch::optim::AdamW (and so FusedAdamW), so GaLore differs from the project's AdamW only by
// the projection.
#include "core/training/sliceable_optimizer.h"

#include <torch/optim/adamw.h>
#include <torch/optim/optimizer.h>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

namespace torch::nn {
class Module;
}

namespace comera {

struct GaloreSettings {
  int64_t rank = 128;
  int64_t update_proj_gap = 200;  // T
  double scale = 0.25;
};

// Per parameter: the step count, the moments (projected for a targeted weight, else full) and
// the projector (undefined for a plain parameter).
struct GaloreParamState
    : public torch::optim::OptimizerCloneableParamState<GaloreParamState> {
  TORCH_ARG(int64_t, step) = 0;
  TORCH_ARG(at::Tensor, exp_avg);
  TORCH_ARG(at::Tensor, exp_avg_sq);
  TORCH_ARG(at::Tensor, projector) = {};

 public:
  void serialize(torch::serialize::InputArchive& archive) override;
  void serialize(torch::serialize::OutputArchive& archive) const override;
};

// Which side GaLore projects a weight of shape (rows, cols) from, and the shapes it keeps.
struct GaloreShapes {
  bool right = true;  // rows >= cols: P = top-r right singular vectors, R = G·Pᵀ
  std::vector<int64_t> projector, moments;
};
GaloreShapes galore_shapes(int64_t rows, int64_t cols, int64_t rank);

class Galore : public torch::optim::Optimizer, public SliceableOptimizer {
 public:
  // Groups carry AdamWOptions (lr, betas, eps, weight_decay; amsgrad is refused). `projected`
  // lists the parameters GaLore projects (2-D, in the groups).
  Galore(std::vector<torch::optim::OptimizerParamGroup> groups,
         torch::optim::AdamWOptions defaults, GaloreSettings settings,
         const std::vector<at::Tensor>& projected);

  torch::Tensor step(LossClosure closure = nullptr) override;
  void save(torch::serialize::OutputArchive& archive) const override;
  void load(torch::serialize::InputArchive& archive) override;
  // Plain parameters' moments are cut like their parameters; projected weights are never
  // tensorized, so truncation does not reach them.
  void slice_state(const std::vector<ParamSlice>& slices) override;

  const GaloreSettings& settings() const { return settings_; }
  bool is_projected(const at::Tensor& p) const { return projected_.count(p.unsafeGetTensorImpl()) > 0; }
  // Entries held for `p`: the parameter itself plus its state tensors (moments, projector).
  int64_t state_elements(const at::Tensor& p) const;

 private:
  GaloreSettings settings_;
  std::unordered_set<const void*> projected_;
};

class OptimizerKind;

// training.optimizer.kind "galore": AdamW's betas and eps, rank, update_proj_gap and scale. It
// projects the weights the model names (core/models/projected_weights.h); a model that names
// none takes AdamW's step throughout.
std::shared_ptr<const OptimizerKind> galore_kind();

}  // namespace comera
