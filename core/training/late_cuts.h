#pragma once
// The late stage by explicit cuts (late_stage.control "cut"). The gradient of the max-gap
// objective cannot steer size: shrinking every d while the cores grow lowers the surrogate and
// leaves the model, and AdamW's unit steps cut all bonds in lockstep (docs/training.md, "The
// late stage on a problem with a known front"). Here the task loss alone trains, and at the
// end of every window of cut_every_steps steps the objective
//   f = max{omega_loss (L - L0), omega_size (S - S0)} + rho (L + S)
// is measured with the exact size S and L the mean task loss over the window's second half.
// While the size gap binds, the weakest slices (least share of their bond's energy
// |d_i| ||left slice|| ||right slice||, invariant to moving scale between d and the cores) are
// masked, enough to close cut_fraction of the gap difference without passing S0 in one cut.
// The next window trains with them masked; the cut is kept (cut out for real) if f is no
// worse, else the slices come back and later cuts are at most half as large. A rejected
// single slice ends the cutting: f is then at a minimum along the cuts.
#include "core/training/train_config.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace torch::nn {
class Module;
}
namespace torch::optim {
class Optimizer;
}

namespace comera {

struct MaskedSlice {
  std::string layer;
  int64_t bond = 0, index = 0;  // rank vector `bond` of the layer, entry `index`
  double value = 0;             // d before masking, restored on rejection
};

// What a checkpoint keeps, so a resumed run decides as the uninterrupted one.
struct LateCutState {
  int64_t steps = 0;                // steps of the window in progress
  double loss_sum = 0;              // task losses over its second half
  int64_t losses = 0;
  double objective_before = 0;      // f when the pending slices were masked
  double cap = 0;                   // most core entries one cut may remove; 0 = no cap
  bool settled = false;             // a single slice was rejected: no more cuts
  // Slices were restored: the next window, in which the model re-adapts to them, is not
  // measured for a cut; the one after it is.
  bool skip_next = false;
  std::vector<MaskedSlice> pending;

  nlohmann::json to_json() const;
  static LateCutState from_json(const nlohmann::json& j);
};

struct CutDecision {
  enum class Kind { None, Masked, Kept, Restored } kind = Kind::None;
  double loss = 0, size = 0, objective = 0;  // L, S (units of the initial size), f measured
  int64_t slices = 0;                        // masked, kept or restored
  std::vector<std::string> notices;          // what happened, a line each
};

class LateCuts {
 public:
  // initial_size: exact core entries at initialisation (S's unit).
  LateCuts(LateStageConfig config, double initial_size, LateCutState state = {});

  const LateCutState& state() const { return state_; }
  bool pending() const { return !state_.pending.empty(); }

  // After each late-stage step, its task loss; true when the window is complete.
  bool record(double task_loss);
  // Keeps masked slices at zero against the optimiser's momentum (after every step).
  void hold(torch::nn::Module& model) const;
  // At a window's end: judges the pending cut, then masks the next one if the size gap binds.
  // size_target: S0 in units of the initial size. Kept cuts are cut out of the model and the
  // optimiser's state (with fold as configured).
  CutDecision decide(torch::nn::Module& model, torch::optim::Optimizer& optimizer,
                     double size_target, bool fold);
  // At the end of training: judges a pending cut on the steps its window had, masks no other.
  CutDecision resolve(torch::nn::Module& model, torch::optim::Optimizer& optimizer,
                      double size_target, bool fold);

 private:
  // The window's mean loss (NaN when its second half had no step); starts the next window.
  double take_window_loss();
  double objective(double loss, double size, double size_target) const;
  // The weighted gaps omega_loss (L - L0) and omega_size (S - S0), the two terms of f's max.
  struct Gaps {
    double loss, size;
  };
  Gaps gaps(double loss, double size, double size_target) const;
  CutDecision judge(torch::nn::Module& model, torch::optim::Optimizer& optimizer, double loss,
                    double size, double size_target, bool fold);

  LateStageConfig config_;
  double initial_size_;
  LateCutState state_;
};

}  // namespace comera
