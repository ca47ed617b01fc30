#pragma once
// The model's parameters split the way the optimiser treats them (METHOD §3): TT/TTM cores,
// rank vectors, and everything else, plus the tensorized layers by module name.
#include "core/layers/tensorized.h"

#include <ATen/core/Tensor.h>

#include <string>
#include <utility>
#include <vector>

namespace torch::nn {
class Module;
}

namespace comera {

struct ParameterGroups {
  std::vector<at::Tensor> cores, rank_vectors, other;
  std::vector<double> core_scales;     // each core's initial standard deviation (core_init_scales)
  std::vector<bool> embedding_cores;   // whether each core belongs to a TTM table
};

ParameterGroups group_parameters(const torch::nn::Module& model);

struct NamedTensorized {
  std::string name;  // module path, e.g. "encoder0.attention.query"
  Tensorized* layer;
};

// Every Tensorized module of the tree (the root included, named ""), in module order. The
// model may live on the stack.
std::vector<NamedTensorized> tensorized_layers(const torch::nn::Module& model);

}  // namespace comera
