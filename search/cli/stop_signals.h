#pragma once
// SIGINT, SIGTERM and SIGPIPE (an output pipe closed, e.g. `| head`) ask a run to stop at its
// next step: it writes its checkpoint, its trial ends killed and resumable, and the command
// exits with 128 + the signal. A second SIGINT or SIGTERM ends the process at once.
#include <atomic>

namespace comera::cli {

// Installs the handlers (once) and returns the flag they set.
const std::atomic<bool>& stop_on_signals();
// The signal that set the flag, 0 if none.
int stop_signal();
// The exit code for a run that stopped on a signal: 128 + the signal.
int signal_exit_code();

}  // namespace comera::cli
