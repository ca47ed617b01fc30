#pragma once
// COMERA_PAUSE_AT=T:E stops this process (SIGSTOP) once the T-th trial it runs has recorded its
// E-th epoch, before that epoch's checkpoint. A test, or a person showing how resume works,
// then signals the sweep at that exact point instead of guessing with timers.
#include "search/runs/claimed_trial.h"

namespace comera::cli {

// Wraps `trials.configure_trainer` when the variable is set; a malformed value is an error
// naming the variable and the form it takes.
void pause_at_from_environment(ClaimedTrialOptions& trials);

}  // namespace comera::cli
