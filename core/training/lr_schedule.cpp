#include "core/training/lr_schedule.h"

#include <algorithm>
#include <cmath>

namespace comera {

double lr_factor(const ScheduleConfig& s, int64_t step, int64_t total_steps) {
  if (s.warmup_steps > 0 && step < s.warmup_steps)
    return static_cast<double>(step + 1) / static_cast<double>(s.warmup_steps);
  if (s.kind == ScheduleKind::Constant) return 1.0;
  const double span = static_cast<double>(std::max<int64_t>(1, total_steps - s.warmup_steps));
  const double t = std::clamp(static_cast<double>(step - s.warmup_steps) / span, 0.0, 1.0);
  const double shape = s.kind == ScheduleKind::Linear ? 1.0 - t : 0.5 * (1.0 + std::cos(M_PI * t));
  return s.min_factor + (1.0 - s.min_factor) * shape;
}

}  // namespace comera
