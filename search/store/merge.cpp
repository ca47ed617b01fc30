#include "search/store/merge.h"

#include "core/util/error.h"
#include "search/store/canonical_json.h"
#include "search/store/checks.h"
#include "search/store/decisions.h"
#include "search/store/epoch_metrics.h"
#include "search/store/kernel_choices.h"
#include "search/store/layer_ranks.h"
#include "search/store/objectives.h"
#include "search/store/studies.h"
#include "search/store/trials.h"

#include <SQLiteCpp/Column.h>
#include <SQLiteCpp/Statement.h>

#include <map>
#include <regex>
#include <vector>

namespace comera::store {

namespace {

// How finished a state is: a merge keeps the more finished copy of a config.
int progress(TrialState state) {
  switch (state) {
    case TrialState::Queued:
      return 0;
    case TrialState::Running:
      return 1;
    case TrialState::Failed:
    case TrialState::Killed:
    case TrialState::Pruned:
      return 2;
    case TrialState::Diverged:
      return 3;
    case TrialState::Complete:
      return 4;
  }
  return 0;
}

// Throws when `study` (of `source`) cannot join the study of its name in `into_path`.
void check_same_study(const Study& existing, const std::string& into_path, const Study& study,
                      const std::string& source) {
  const std::string fix = ": rename the study in one of them first, e.g. sqlite3 " + source +
                          " \"UPDATE studies SET name = '" + study.name + "_2' WHERE name = '" + study.name +
                          "'\", or merge them into separate files";
  if (existing.objectives != study.objectives)
    throw Error("study '" + study.name + "' has objectives '" + study.objectives + "' in " + source + " but '" +
                existing.objectives + "' in " + into_path + fix);
  // The same name from another spec is another study: its points do not belong on one front.
  if (canonical_json(existing.spec) != canonical_json(study.spec))
    throw Error("study '" + study.name + "' in " + source + " comes from another sweep spec than the study of " +
                "that name in " + into_path + fix);
}

int64_t merge_study(ResultsDb& into, const std::string& source, const Study& study, MergeCounts& counts) {
  if (auto existing = find_study(into, study.name)) {
    check_same_study(*existing, into.path(), study, source);
    return existing->id;
  }
  into.write([&] {
    SQLite::Statement insert(into.sql(),
                             "INSERT INTO studies (name, spec, objectives, created_at) VALUES "
                             "(?, ?, ?, ?)");
    insert.bind(1, study.name);
    insert.bind(2, canonical_json(study.spec));
    insert.bind(3, study.objectives);
    insert.bind(4, study.created_at);
    insert.exec();
  });
  ++counts.studies_added;
  return find_study(into, study.name)->id;
}

// A study's trial numbers in the source -> in the destination.
using Numbers = std::map<int64_t, int64_t>;

// "by trial 1", "trials 1, 3", "between trial 3 and trial 5" with each number as renumbered.
std::string renumbered(const std::string& text, const Numbers& numbers) {
  static const std::regex names(R"(\btrials? \d+(, \d+)*)"), number(R"(\d+)");
  std::string out;
  auto rest = text.cbegin();
  for (std::sregex_iterator it(text.begin(), text.end(), names), end; it != end; ++it) {
    out.append(rest, (*it)[0].first);
    rest = (*it)[0].second;
    const std::string list = it->str();
    auto from = list.cbegin();
    for (std::sregex_iterator n(list.begin(), list.end(), number); n != end; ++n) {
      out.append(from, (*n)[0].first);
      from = (*n)[0].second;
      const auto found = numbers.find(std::stoll(n->str()));
      out += found == numbers.end() ? n->str() : std::to_string(found->second);
    }
    out.append(from, list.cend());
  }
  out.append(rest, text.cend());
  return out;
}

// A trial's decisions name other trials of its study by number, in their reason, in
// detail.dominated_by[].trial and detail.between ("trial 3"); a pruned trial's error is its
// decision's line. Copied in the destination's numbers (caller holds the write transaction).
void copy_decisions(ResultsDb& into, ResultsDb& from, const Trial& t, int64_t id, const Numbers& numbers) {
  for (auto d : read_decisions(from.sql(), t.id)) {
    auto& detail = d.detail;
    if (detail.contains("reason") && detail["reason"].is_string())
      detail["reason"] = renumbered(detail["reason"].get<std::string>(), numbers);
    if (detail.contains("dominated_by") && detail["dominated_by"].is_array())
      for (auto& by : detail["dominated_by"])
        if (by.is_object() && by.contains("trial") && by["trial"].is_number_integer())
          if (const auto found = numbers.find(by["trial"].get<int64_t>()); found != numbers.end())
            by["trial"] = found->second;
    if (detail.contains("between") && detail["between"].is_array())
      for (auto& name : detail["between"])
        if (name.is_string()) name = renumbered(name.get<std::string>(), numbers);
    write_decision(into.sql(), id, d);
  }
  if (t.state != TrialState::Pruned) return;
  SQLite::Statement error(into.sql(), "UPDATE trials SET error = NULLIF(?, '') WHERE id = ?");
  error.bind(1, renumbered(t.error, numbers));
  error.bind(2, id);
  error.exec();
}

// Copies a trial with all it recorded but its decisions (caller holds the write transaction);
// its id in the destination.
int64_t copy_trial(ResultsDb& into, ResultsDb& from, const Trial& t, int64_t study_id, int64_t number,
                   int64_t replica) {
  SQLite::Statement insert(
      into.sql(),
      "INSERT INTO trials (uid, study_id, number, replica, config, config_hash, seed, state, "
      "attempts, created_at, started_at, ended_at, heartbeat_at, error, worker, git_commit, "
      "git_dirty, torch_version, device, threads, host) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
      "NULLIF(?, ''), NULLIF(?, ''), NULLIF(?, ''), NULLIF(?, ''), NULLIF(?, ''), ?, ?, ?, ?, ?, "
      "?)");
  insert.bind(1, t.uid);
  insert.bind(2, study_id);
  insert.bind(3, number);
  insert.bind(4, replica);
  insert.bind(5, canonical_json(t.config));
  insert.bind(6, t.config_hash);
  if (t.seed) insert.bind(7, *t.seed);
  insert.bind(8, to_string(t.state));
  insert.bind(9, t.attempts);
  insert.bind(10, t.created_at);
  insert.bind(11, t.started_at);
  insert.bind(12, t.ended_at);
  insert.bind(13, t.heartbeat_at);
  insert.bind(14, t.error);
  insert.bind(15, t.worker);
  if (const auto& env = t.environment) {
    insert.bind(16, env->git_commit);
    insert.bind(17, env->git_dirty ? 1 : 0);
    insert.bind(18, env->torch_version);
    insert.bind(19, env->device);
    insert.bind(20, env->threads);
    insert.bind(21, env->host);
  }
  insert.exec();
  const int64_t id = into.sql().getLastInsertRowid();
  for (const auto& epoch : read_epochs(from.sql(), t.id)) write_epoch(into.sql(), id, epoch);
  for (const auto& check : read_checks(from.sql(), t.id)) write_check(into.sql(), id, check);
  for (const auto& [epoch, layers] : read_layer_ranks(from.sql(), t.id))
    write_layer_ranks(into.sql(), id, epoch, layers);
  write_objectives(into.sql(), id, read_objectives(from.sql(), t.id));
  return id;
}

enum class Outcome { Added, Replaced, Skipped };

struct Merged {
  Outcome outcome;
  int64_t number;   // the trial's number in the destination
  int64_t id = 0;   // its copy's id; 0 when skipped
};

Merged merge_trial(ResultsDb& into, ResultsDb& from, const Trial& t, int64_t study_id) {
  return into.write([&] {
    // The same trial (a copy of this file was worked on elsewhere), else the same config.
    SQLite::Statement match(into.sql(),
                            "SELECT id, number, replica, state, 0 AS by FROM trials WHERE uid = "
                            "?1 UNION ALL SELECT id, number, replica, state, 1 FROM trials WHERE "
                            "?2 AND study_id = ?3 AND config_hash = ?4 AND replica = ?5 ORDER BY "
                            "by LIMIT 1");
    match.bind(1, t.uid);
    match.bind(2, t.study != kRunsStudy ? 1 : 0);
    match.bind(3, study_id);
    match.bind(4, t.config_hash);
    match.bind(5, t.replica);
    if (match.executeStep()) {
      const int64_t number = match.getColumn(1).getInt64();
      if (progress(t.state) <= progress(parse_trial_state(match.getColumn(3).getString())))
        return Merged{Outcome::Skipped, number};
      const int64_t id = match.getColumn(0).getInt64();
      const int64_t replica = match.getColumn(2).getInt64();
      match.reset();
      SQLite::Statement drop(into.sql(), "DELETE FROM trials WHERE id = ?");
      drop.bind(1, id);
      drop.exec();
      return Merged{Outcome::Replaced, number, copy_trial(into, from, t, study_id, number, replica)};
    }
    // A new trial; a distinct run of a config run here before gets the next replica number.
    SQLite::Statement next(into.sql(),
                           "SELECT COALESCE(MAX(number), 0) + 1, (SELECT COALESCE(MAX(replica) "
                           "+ 1, 0) FROM trials WHERE study_id = ?1 AND config_hash = ?2), "
                           "EXISTS (SELECT 1 FROM trials WHERE study_id = ?1 AND config_hash = ?2 "
                           "AND replica = ?3) FROM trials WHERE study_id = ?1");
    next.bind(1, study_id);
    next.bind(2, t.config_hash);
    next.bind(3, t.replica);
    next.executeStep();
    const bool replica_taken = next.getColumn(2).getInt() != 0;
    const int64_t number = next.getColumn(0).getInt64();
    return Merged{Outcome::Added, number,
                  copy_trial(into, from, t, study_id, number, replica_taken ? next.getColumn(1).getInt64() : t.replica)};
  });
}

}  // namespace

void check_mergeable(ResultsDb* into, const std::vector<ResultsDb*>& sources) {
  std::map<std::string, std::pair<Study, std::string>> first;  // by name: the study and its file
  if (into)
    for (auto& study : list_studies(*into)) first.emplace(study.name, std::make_pair(study, into->path()));
  for (ResultsDb* source : sources)
    for (auto& study : list_studies(*source)) {
      const auto [it, added] = first.emplace(study.name, std::make_pair(study, source->path()));
      if (!added) check_same_study(it->second.first, it->second.second, study, source->path());
    }
}

MergeCounts merge_database(ResultsDb& into, ResultsDb& from, const MergeProgress& progress) {
  if (into.read_only()) throw Error(into.path() + " was opened read-only: cannot merge into it");
  MergeCounts counts;
  for (const auto& study : list_studies(from)) {
    const int64_t study_id = merge_study(into, from.path(), study, counts);
    const auto trials = list_trials(from, study.name);
    Numbers numbers;
    std::vector<std::pair<size_t, int64_t>> copied;  // (trial, its copy's id)
    for (size_t i = 0; i < trials.size(); ++i) {
      const Merged merged = merge_trial(into, from, trials[i], study_id);
      numbers[trials[i].number] = merged.number;
      if (merged.id) copied.emplace_back(i, merged.id);
      ++(merged.outcome == Outcome::Added      ? counts.trials_added
         : merged.outcome == Outcome::Replaced ? counts.trials_replaced
                                               : counts.trials_skipped);
      if (progress)
        progress(study.name, static_cast<int64_t>(i + 1), static_cast<int64_t>(trials.size()));
    }
    // Once every trial of the study has its number here: decisions may name later trials.
    for (const auto& [i, id] : copied) into.write([&] { copy_decisions(into, from, trials[i], id, numbers); });
  }
  for (const auto& choice : list_kernel_choices(from)) {
    const auto existing = get_kernel_choice(into, choice.key, choice.fingerprint);
    if (existing && existing->created_at >= choice.created_at) continue;
    put_kernel_choice(into, choice);
    ++counts.kernel_choices_copied;
  }
  return counts;
}

}  // namespace comera::store
