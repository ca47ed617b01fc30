#include "search/cli/pause_point.h"

#include "core/util/error.h"

#include <csignal>
#include <cstdlib>
#include <memory>
#include <string>

namespace comera::cli {

void pause_at_from_environment(ClaimedTrialOptions& trials) {
  const char* value = std::getenv("COMERA_PAUSE_AT");
  if (!value || !*value) return;
  int trial = 0, epoch = 0;
  char end = 0;
  if (std::sscanf(value, "%d:%d%c", &trial, &epoch, &end) != 2 || trial < 1 || epoch < 1)
    throw Error(std::string("COMERA_PAUSE_AT=") + value +
                " is not TRIAL:EPOCH (both counted from 1, e.g. 2:3); unset it to run without pausing");
  auto trials_begun = std::make_shared<int>(0);
  trials.configure_trainer = [trial, epoch, trials_begun, inner = trials.configure_trainer](TrainerOptions& t) {
    if (inner) inner(t);
    if (++*trials_begun != trial) return;
    t.on_epoch = [epoch, seen = std::make_shared<int>(0), next = t.on_epoch](const EpochMetrics& m) {
      if (next) next(m);
      if (++*seen == epoch) std::raise(SIGSTOP);
    };
  };
}

}  // namespace comera::cli
