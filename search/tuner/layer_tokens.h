#pragma once
// The token count each layer of an experiment's model sees per training step, by module path:
// batch x max_length, except the classification head, which reads [CLS] only (batch). The
// tuner keys its choices on it.
#include "core/training/experiment.h"

#include <cstdint>
#include <functional>
#include <string>

namespace comera::tuner {

std::function<int64_t(const std::string& module_path)> layer_tokens(const ExperimentConfig& e);

}  // namespace comera::tuner
