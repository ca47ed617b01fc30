#pragma once
// LTE (LoRA-the-Explorer, Huh et al. 2024; reference code minyoungg/LTE): a linear layer whose
// weight W and bias are frozen, trained through H parallel LoRA heads (A_h: r x in, B_h:
// out x r, scale s = alpha / r). In training the batch (dim 0) is split into H chunks and head
// h sees chunk h: y = W·x + bias + s·(B_h·A_h − B'_h·A'_h)·x, with B'_h, A'_h the factors at the
// last merge. Every merge_steps optimiser steps, W += mean_h s·(B_h·A_h − B'_h·A'_h) and the
// factors become the new B', A' (they are kept, not re-initialised). In evaluation y = W·x + bias.
// A starts orthogonal, scaled by sqrt(in / r); B starts at zero. W and bias have no gradient, so
// only the factors carry optimiser state. A batch smaller than H leaves the last heads idle.
#include "core/layers/dense_stand_in.h"

#include <torch/arg.h>
#include <torch/nn/cloneable.h>
#include <torch/nn/pimpl.h>

#include <cstdint>

namespace comera {

struct LteLinearOptions {
  LteLinearOptions(int64_t in, int64_t out, int64_t rank) : in_(in), out_(out), rank_(rank) {}
  TORCH_ARG(int64_t, in);
  TORCH_ARG(int64_t, out);
  TORCH_ARG(int64_t, rank);
  TORCH_ARG(int64_t, heads) = 4;
  TORCH_ARG(double, alpha) = 1;
  TORCH_ARG(int64_t, merge_steps) = 1;
  TORCH_ARG(bool, bias) = true;
};

class LteLinearImpl : public torch::nn::Cloneable<LteLinearImpl>, public DenseStandIn {
 public:
  explicit LteLinearImpl(LteLinearOptions options);

  void reset() override;
  // W ~ N(0, 1/(in+out)) like the dense layer; bias U(±1/sqrt(out)); A orthogonal scaled; B 0.
  void reset_parameters();
  // x: (batch, ..., in) -> (batch, ..., out).
  at::Tensor forward(const at::Tensor& x);
  // Counts an optimiser step; merges the heads into W when merge_steps have passed.
  void after_step();
  // W += mean_h s·(B_h·A_h − B'_h·A'_h); B', A' <- B, A.
  void merge();
  double scaling() const { return options.alpha() / static_cast<double>(options.rank()); }
  void pretty_print(std::ostream& stream) const override;
  // The heads are extra; W is the dense layer's own.
  std::vector<at::Tensor> own_form() const override { return {lora_a, lora_b}; }
  int64_t dense_in_place() const override { return 0; }

  LteLinearOptions options;
  at::Tensor weight, bias;           // frozen (bias undefined when options.bias() is false)
  at::Tensor lora_a, lora_b;         // (H, r, in), (H, out, r): trained
  at::Tensor merged_a, merged_b;     // buffers: the factors at the last merge
  at::Tensor steps;                  // buffer: optimiser steps since the last merge

 private:
  int64_t host_steps_ = -1;  // `steps` on the host; -1: not read yet
};

TORCH_MODULE(LteLinear);

// Calls after_step() on every LTE layer of the tree (after each optimiser step).
void lte_after_step(torch::nn::Module& model);

}  // namespace comera
