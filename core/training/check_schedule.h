// When a trainer evaluates inside an epoch (a "check"): one struct from the sweep's pruning
// rule down to the trainer, so each layer passes it on rather than copying its fields.
#pragma once

#include <cstdint>

namespace comera {

struct CheckSchedule {
  int64_t every_steps = 0;  // > 0: every so many steps of an epoch, never at its end
  bool late_stage = true;   // false: none once the late stage runs
  int64_t from_epoch = 0;   // none in earlier epochs (nothing could be judged there)

  // Whether step `step_in_epoch` of an epoch of `batches` steps, in epoch `epoch`, is checked.
  bool due(int64_t epoch, int64_t step_in_epoch, int64_t batches, bool late) const {
    return every_steps > 0 && epoch >= from_epoch && step_in_epoch % every_steps == 0 &&
           step_in_epoch < batches && (late_stage || !late);
  }
};

}  // namespace comera
