#include "search/sweep/sweep_runner.h"

#include "core/data/task_data.h"
#include "core/training/experiment.h"
#include "core/util/error.h"
#include "core/util/format.h"
#include "search/environment.h"
#include "search/runs/recorded_run.h"
#include "search/runs/trial_recorder.h"
#include "search/store/canonical_json.h"
#include "search/store/trial_queue.h"
#include "search/sweep/adaptive.h"
#include "search/sweep/trial_expansion.h"
#include "search/sweep/trial_runner.h"
#include "search/sweep/worker_liveness.h"

#include <algorithm>
#include <chrono>
#include <sstream>
#include <set>

namespace comera::sweep {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// "late loss_target=1 size_ratio=0.5 seed=0"
std::string describe_point(const nlohmann::json& config) {
  std::string text = config.value("kind", "");
  const nlohmann::json point = config.value("point", nlohmann::json::object());
  for (const auto& [key, value] : point.items())
    text += " " + key + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
  return text;
}

// Running trials of the study whose worker process on this host is gone go back to the queue.
size_t requeue_orphans(store::ResultsDb& db, const std::string& study,
                       const std::function<void(const std::string&)>& say) {
  size_t count = 0;
  for (const auto& t : store::list_trials(db, study))
    if (t.state == store::TrialState::Running && local_worker_gone(t.worker) &&
        store::requeue_trial(db, t.id, store::TrialState::Running, t.worker)) {
      say("trial " + std::to_string(t.number) + " was interrupted (its worker " + t.worker +
          " is gone): back in the queue");
      ++count;
    }
  return count;
}

// A missing data file would fail every trial that reads it: named before anything is queued.
// The distinct data sections the trials read (an adaptive sweep's proposals: its base's).
std::vector<DataConfig> trial_data(const SweepSpec& spec, const std::vector<nlohmann::json>& trials) {
  std::vector<DataConfig> out;
  if (spec.step) return out;  // steps on random tokens read no data
  std::set<std::string> seen;
  auto add = [&](const nlohmann::json& experiment) {
    if (seen.insert(experiment.value("data", nlohmann::json::object()).dump()).second)
      out.push_back(parse_experiment(experiment).data);
  };
  if (spec.sampling.adaptive) add(spec.base);
  for (const auto& t : trials)
    if (t.contains("experiment")) add(t.at("experiment"));
  return out;
}

void require_data(const SweepSpec& spec, const std::vector<nlohmann::json>& trials) {
  for (const auto& data : trial_data(spec, trials)) try {
      require_task_files(data);
    } catch (const Error& e) {
      throw Error(std::string(e.what()) + "; this sweep queued and ran nothing");
    }
}

// Pruned trials of this sweep back in the queue, each with a decision that keeps it from being
// pruned again; it resumes from its checkpoint.
size_t resume_pruned(store::ResultsDb& db, const std::string& study,
                     const std::function<bool(const store::Trial&)>& ours) {
  size_t count = 0;
  for (const auto& t : store::list_trials(db, study))
    if (t.state == store::TrialState::Pruned && ours(t))
      count += db.write([&] {
        if (!store::requeue_trial(db, t.id, store::TrialState::Pruned, t.worker)) return false;
        store::write_decision(db.sql(), t.id, {store::DecisionKind::Resumed, std::nullopt,
                                               {{"reason", "resumed on request (--resume-pruned): runs to its end"}}, ""});
        return true;
      });
  return count;
}

}  // namespace

std::string describe_states(const SweepReport& report) {
  std::string text = std::to_string(report.trials) + " trials";
  const char* order[] = {"complete", "pruned", "diverged", "failed", "killed", "running", "queued"};
  std::string parts;
  for (const char* state : order) {
    const auto it = report.states.find(state);
    if (it != report.states.end() && it->second > 0)
      parts += (parts.empty() ? "" : ", ") + std::to_string(it->second) + " " + state;
  }
  return parts.empty() ? text : text + ": " + parts;
}

void check_sweep_options(const SweepSpec& spec, const SweepOptions& options) {
  if (!(options.stale_after_s >= static_cast<double>(kMinStaleAfter.count())))
    throw Error("stale after " + number_text(options.stale_after_s) +
                " s (--stale-after): give at least " + std::to_string(kMinStaleAfter.count()) +
                " s; running trials write a heartbeat every " +
                std::to_string(kHeartbeatInterval.count()) +
                " s, so a shorter limit declares live workers on other hosts dead");
  const bool adaptive = spec.sampling.adaptive;
  if (options.propose_only > 0 && (!adaptive || options.shard.count > 1))
    throw Error(std::string("--propose: ") + (adaptive ? "a shard runs what was proposed; propose without --shard"
                                                       : "only an adaptive sweep (\"sampling\": {\"method\": \"adaptive\"}) proposes trials"));
}

std::vector<std::string> sweep_inputs(const SweepSpec& spec, const std::string& db_path) {
  std::vector<std::string> inputs = {spec.file, spec.base_file, db_path, checkpoint_folder(db_path, spec.name) + "/"};
  for (const auto& data : trial_data(spec, expand_trials(spec))) {
    const auto read = task_data_inputs(data);
    inputs.insert(inputs.end(), read.begin(), read.end());
  }
  return inputs;
}

SweepReport run_sweep(const SweepSpec& spec, const SweepOptions& options) {
  const auto start = Clock::now();
  check_sweep_options(spec, options);
  // An adaptive sweep's trials are all the study's: it adds them as it goes, except in a round
  // across hosts, where each shard runs its share of the queued ones and proposes nothing.
  const bool adaptive = spec.sampling.adaptive;
  const bool round_task = adaptive && options.shard.count > 1;
  const auto configs = expand_trials(spec);
  std::vector<nlohmann::json> mine;
  for (size_t p : shard_positions(configs.size(), round_task ? Shard{} : options.shard)) mine.push_back(configs[p]);

  if (!options.trials.data) require_data(spec, mine);  // else the caller provides the data

  const auto say = [&options](const std::string& message) {
    if (options.on_message) options.on_message(message);
  };
  SweepReport report;
  report.study = spec.name;
  auto db = store::ResultsDb::open(options.db_path);
  if (const auto old = store::find_study(db, spec.name); old && old->objectives != spec.objectives) {
    if (!store::replace_objectives(db, spec.name, spec.objectives))
      throw Error("study '" + spec.name + "' in " + db.path() + " has objectives '" +
                  old->objectives + "', not the spec's '" + spec.objectives +
                  "', and complete or running trials: give the spec its objectives back, or "
                  "another \"name\" for a new study");
    say("study " + spec.name + " in " + db.path() + " had objectives '" + old->objectives +
        "' and no complete trial: now '" + spec.objectives +
        "' (--retry-failed runs its failed trials again)");
  }
  const auto study = store::create_or_get_study(db, spec.name, spec.source, spec.objectives);
  if (store::canonical_json(study.spec) != store::canonical_json(spec.source))
    say("note: study " + spec.name + " in " + db.path() +
        " was made from a different spec; its trials are kept and new ones added");
  auto ids = store::enqueue_trials(db, study, mine);
  if (round_task) {
    std::vector<int64_t> queued_ids;
    for (const auto& t : store::list_trials(db, spec.name))
      if (t.state == store::TrialState::Queued) queued_ids.push_back(t.id);
    ids.clear();
    for (size_t p : shard_positions(queued_ids.size(), options.shard)) ids.push_back(queued_ids[p]);
  }
  const bool proposes = adaptive && !round_task;
  const std::set<int64_t> id_set(ids.begin(), ids.end());
  auto ours = [&](const store::Trial& t) { return proposes || id_set.count(t.id) > 0; };
  report.trials = ids.size();

  report.requeued = requeue_orphans(db, spec.name, say);
  // Killed trials (interrupted, or stopped by a step limit) go on from their checkpoints.
  for (const auto& t : store::list_trials(db, spec.name))
    if (t.state == store::TrialState::Killed && ours(t) &&
        store::requeue_trial(db, t.id, store::TrialState::Killed, t.worker)) {
      say("trial " + std::to_string(t.number) + " was interrupted: back in the queue, to resume from its checkpoint");
      ++report.requeued;
    }
  // Trials of live processes here are never stale: local_worker_gone answers for those.
  report.stale = static_cast<size_t>(store::mark_stale_trials(
      db, options.stale_after_s, [](const std::string& w) { return !judged_by_process(w); }));
  if (report.stale)
    say(std::to_string(report.stale) + " running trial(s) had no heartbeat for " +
        number_text(options.stale_after_s) + " s: marked failed (--retry-failed runs them again)");
  if (options.retry_failed) report.retried = static_cast<size_t>(store::requeue_failed(db, study.id));
  if (options.resume_pruned) report.resumed = resume_pruned(db, spec.name, ours);

  ClaimedTrialOptions trial_options = options.trials;
  if (spec.pruning) {
    const auto objectives = store::parse_objectives(spec.objectives);
    trial_options.prune = [&db, rule = *spec.pruning, objectives](const store::Trial& trial, const EpochMetrics& m) {
      return judge_trial(db, rule, objectives, trial,
                         m.partial ? JudgedAt(m.epoch, m.step) : JudgedAt(m.epoch));
    };
    // Checks where no trial is judged would cost evaluations for nothing.
    trial_options.checks = {spec.pruning->every_steps, spec.pruning->late_checks, spec.pruning->from_epoch};
  }

  const std::string worker = store::default_worker_id();
  const Environment env = current_environment(options.device.empty() ? "cpu" : options.device);
  TrialRunner runner(trial_options, options.device);
  auto queued = [&] {
    size_t n = 0;
    for (const auto& t : store::list_trials(db, spec.name)) n += ours(t) && t.state == store::TrialState::Queued;
    return n;
  };
  auto claim = [&] {
    return proposes ? store::claim_next_trial(db, study.id, worker, env)
                    : store::claim_next_trial_among(db, study.id, ids, worker, env);
  };
  if (adaptive) {
    say("sweep " + spec.name + ": " + describe_sampling(spec) + "; " + std::to_string(spent(db, spec.name).trials) +
        " proposed so far");
  }
  if (options.propose_only > 0) {
    // A round across hosts: a batch of proposals, each pending for the next, for shards to run.
    for (int64_t i = 0; i < options.propose_only; ++i) {
      const auto proposed = propose_next(db, study, spec);
      say("[" + spec.name + "] " + proposed.message);
      if (!proposed.trial_id) break;
      ++report.proposed;
    }
    const auto trials = store::list_trials(db, spec.name);
    for (const auto& t : trials) ++report.states[store::to_string(t.state)];
    report.trials = trials.size();
    report.seconds = seconds_since(start);
    return report;
  }
  say("sweep " + spec.name + ": " + std::to_string(ids.size()) + (proposes ? " baseline trials" : " trials") +
      (options.shard.count > 1 ? " in shard " + std::to_string(options.shard.index) + "/" +
                                     std::to_string(options.shard.count)
                               : std::string()) +
      ", " + std::to_string(queued()) + " to run, results in " + db.path());

  const auto* stop = options.trials.stop;
  int failed_in_a_row = 0;
  while ((options.max_trials <= 0 || static_cast<int64_t>(report.ran) < options.max_trials) &&
         !(stop && stop->load())) {
    auto trial = claim();
    if (!trial) {
      // A worker that died meanwhile leaves its trial to us.
      if (requeue_orphans(db, spec.name, say) > 0) continue;
      if (proposes) {
        const auto proposed = propose_next(db, study, spec);
        say("[" + spec.name + "] " + proposed.message);
        if (proposed.trial_id) {
          ++report.proposed;
          continue;
        }
      }
      break;
    }
    const auto trial_start = Clock::now();
    say("[" + spec.name + "] trial " + std::to_string(trial->number) + ": " +
        describe_point(trial->config) + " (" + std::to_string(queued()) + " more queued)");
    const auto state = runner.run(db, *trial, worker);
    ++report.ran;
    say("[" + spec.name + "] trial " + std::to_string(trial->number) + " " +
        store::to_string(state) + " in " + format_duration(seconds_since(trial_start)));
    // Failures in a row have one cause more often than not (a proposal after each would go on
    // without end): stop and say it.
    failed_in_a_row = state == store::TrialState::Failed ? failed_in_a_row + 1 : 0;
    if (failed_in_a_row == kFailuresToStop) {
      const auto failed = store::load_trial(db, trial->id);
      throw Error(std::to_string(kFailuresToStop) + " trials of sweep " + spec.name + " failed in a row, the last (" +
                  std::to_string(trial->number) + ") with: " + (failed ? failed->error : std::string("?")) +
                  ". Fix the cause, then run the sweep again with --retry-failed");
    }
  }

  for (const auto& t : store::list_trials(db, spec.name))
    if (ours(t)) ++report.states[store::to_string(t.state)];
  if (proposes) {
    report.trials = 0;
    for (const auto& [state, n] : report.states) report.trials += n;
  }
  report.seconds = seconds_since(start);
  return report;
}

}  // namespace comera::sweep
