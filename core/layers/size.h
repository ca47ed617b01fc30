#pragma once
// Size accounting for a module tree (METHOD §2): exact size S from effective ranks, the
// differentiable surrogate, dense-equivalent size and compression.
#include "core/layers/tensorized.h"

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

namespace torch::nn {
class Module;
}

namespace comera {

enum class SurrogateKind { Weighted, Mean };
SurrogateKind parse_surrogate_kind(const std::string& name);  // "weighted" | "mean"

// Surviving entries per bond (boundary 1s included); a bond with none surviving is 0.
std::vector<int64_t> effective_ranks(const Tensorized& layer);
// sum_k r̂_{k-1} n_k r̂_k over the cores; 0 when any bond is empty.
int64_t exact_size(const Tensorized& layer);

struct LayerSize {
  std::string name, kind;
  std::vector<int64_t> ranks;   // effective
  int64_t exact = 0;            // core entries at effective ranks
  int64_t rank_params = 0;      // surviving rank-vector entries
  int64_t dense_equivalent = 0;
};

struct ModelSize {
  int64_t tensorized = 0;     // S: sum of exact core sizes
  int64_t rank_params = 0;    // surviving rank-vector entries
  int64_t dense_params = 0;   // every other parameter (biases, norms, dense layers, stand-ins)
  int64_t total_params = 0;   // tensorized + rank_params + dense_params
  int64_t dense_model_params = 0;  // the same architecture built dense
  double compression() const;      // dense_model_params / total_params
  double megabytes() const;        // total_params as float32, in MB (10^6 bytes)
  std::vector<LayerSize> layers;
};

ModelSize model_size(const torch::nn::Module& model);

// Differentiable surrogate Ŝ over every tensorized layer of the tree. Weighted: sum over
// layers and cores of ||d_{k-1}||_1 n_k ||d_k||_1 (boundary norms 1), equal to S when all
// d are 1. Mean: the mean |d| over surviving entries of all layers (the authors' code).
at::Tensor surrogate_size(const torch::nn::Module& model, SurrogateKind kind);

}  // namespace comera
