#pragma once
// `comera sweep`: puts a sweep's trials (this shard's) in the study's queue, recovers trials of
// dead workers, then claims and runs queued trials one at a time until none of this shard's is
// left. Any number of processes may run the same sweep on one database: claims are atomic, so
// no trial runs twice, and a re-run resumes where the last one stopped. An adaptive sweep
// (adaptive.h) proposes a trial whenever none is queued, until its budget is spent.
#include "search/sweep/shard.h"
#include "search/sweep/sweep_spec.h"
#include "search/sweep/trial_runner.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>

namespace comera::sweep {

struct SweepOptions {
  std::string db_path;
  Shard shard;
  bool retry_failed = false;     // put failed trials back in the queue first
  bool resume_pruned = false;    // put pruned trials back in the queue, to run to their end
  // A running trial of another host without a heartbeat this long is failed (at least
  // kMinStaleAfter); one of this host is re-queued once its process is gone, never before.
  double stale_after_s = 300;
  int64_t max_trials = 0;        // run at most this many trials in this process (0: no limit)
  // Adaptive sweeps across hosts, in rounds: > 0 proposes this many trials (within the budget)
  // and runs none; each shard (--shard i/N) of a copy of the database then runs its share of
  // the queued trials, proposing nothing, and the copies are merged back before the next round.
  int64_t propose_only = 0;
  ClaimedTrialOptions trials;    // how trials report (data loaded, progress, epochs, failures)
  std::string device;            // where every trial computes ("cuda"); "": each its training.device
  // The sweep's own messages, one line each (trials starting and ending, requeued and stale
  // trials); the CLI prints them. Unset: none.
  std::function<void(const std::string&)> on_message;
};

struct SweepReport {
  std::string study;
  size_t trials = 0;             // this shard's trials
  size_t ran = 0;                // trials this process ran
  size_t requeued = 0;           // interrupted trials (worker gone) put back in the queue
  size_t stale = 0;              // running trials declared failed for want of a heartbeat
  size_t retried = 0;            // failed trials re-queued by retry_failed
  size_t resumed = 0;            // pruned trials re-queued by resume_pruned
  size_t proposed = 0;           // trials an adaptive sweep proposed in this process
  std::map<std::string, size_t> states;  // this shard's trials by state at the end
  double seconds = 0;
};

// Throws comera::Error naming a flag the options cannot run with (--stale-after below its
// floor, --propose where nothing proposes); run_sweep checks them first.
void check_sweep_options(const SweepSpec& spec, const SweepOptions& options);

// Trials failing in a row after which a sweep stops (a proposal after each failure would go on
// without end).
inline constexpr int kFailuresToStop = 3;

// Runs the spec's trials (this shard's; an adaptive sweep's proposals as they come). Throws
// comera::Error before queueing anything when a trial's data file is missing (unless
// options.trials.data provides the data), and after kFailuresToStop failed trials in a row,
// naming the last one's error.
SweepReport run_sweep(const SweepSpec& spec, const SweepOptions& options);

// What a sweep into `db_path` reads or keeps: the spec and its base, the database, the trials'
// data folders and vocabularies, the study's checkpoint folder (folders end in '/', as
// OutputFile takes them). An output named on the command line may be none of them.
std::vector<std::string> sweep_inputs(const SweepSpec& spec, const std::string& db_path);

// "12 trials: 10 complete, 1 diverged, 1 queued".
std::string describe_states(const SweepReport& report);

}  // namespace comera::sweep
