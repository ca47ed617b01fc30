#pragma once
// Learning-rate schedules as a factor of the peak rate: constant, or linear warm-up then a
// linear or cosine decay to min_factor at the last step.
#include "core/training/train_config.h"

#include <cstdint>

namespace comera {

// step: 0-based optimiser step; total_steps: steps of the whole run.
double lr_factor(const ScheduleConfig& schedule, int64_t step, int64_t total_steps);

}  // namespace comera
