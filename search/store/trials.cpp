#include "search/store/trials.h"

#include "core/util/error.h"

#include <SQLiteCpp/Column.h>
#include <SQLiteCpp/Statement.h>

#include <array>

namespace comera::store {

namespace {

const std::array<const char*, 7> kStateNames = {"queued", "running",  "complete", "failed",
                                                "diverged", "killed", "pruned"};

const char* kSelectTrial =
    "SELECT t.id, t.uid, t.study_id, s.name, t.number, t.replica, t.config, t.config_hash, "
    "t.seed, t.state, t.attempts, t.created_at, t.started_at, t.ended_at, t.heartbeat_at, "
    "t.error, t.worker, t.git_commit, t.git_dirty, t.torch_version, t.device, t.threads, t.host "
    "FROM trials t JOIN studies s ON s.id = t.study_id";

Trial read_trial(SQLite::Statement& q) {
  auto text = [&](int i) { return q.isColumnNull(i) ? std::string() : q.getColumn(i).getString(); };
  Trial t;
  t.id = q.getColumn(0).getInt64();
  t.uid = text(1);
  t.study_id = q.getColumn(2).getInt64();
  t.study = text(3);
  t.number = q.getColumn(4).getInt64();
  t.replica = q.getColumn(5).getInt64();
  t.config = nlohmann::json::parse(text(6));
  t.config_hash = text(7);
  if (!q.isColumnNull(8)) t.seed = q.getColumn(8).getInt64();
  t.state = parse_trial_state(text(9));
  t.attempts = q.getColumn(10).getInt64();
  t.created_at = text(11);
  t.started_at = text(12);
  t.ended_at = text(13);
  t.heartbeat_at = text(14);
  t.error = text(15);
  t.worker = text(16);
  if (!q.isColumnNull(17)) {
    Environment env;
    env.git_commit = text(17);
    env.git_dirty = q.getColumn(18).getInt() != 0;
    env.torch_version = text(19);
    env.device = text(20);
    env.threads = q.getColumn(21).getInt();
    env.host = text(22);
    t.environment = env;
  }
  return t;
}

}  // namespace

std::string to_string(TrialState state) { return kStateNames[static_cast<size_t>(state)]; }

TrialState parse_trial_state(const std::string& text) {
  for (size_t i = 0; i < kStateNames.size(); ++i)
    if (text == kStateNames[i]) return static_cast<TrialState>(i);
  throw Error("'" + text +
              "' is not a trial state: use queued, running, complete, failed, diverged, killed or pruned");
}

nlohmann::json to_json(const Trial& t) {
  return {{"id", t.id},
          {"uid", t.uid},
          {"study", t.study},
          {"number", t.number},
          {"replica", t.replica},
          {"config", t.config},
          {"config_hash", t.config_hash},
          {"seed", t.seed ? nlohmann::json(*t.seed) : nlohmann::json()},
          {"state", to_string(t.state)},
          {"attempts", t.attempts},
          {"created_at", t.created_at},
          {"started_at", t.started_at},
          {"ended_at", t.ended_at},
          {"heartbeat_at", t.heartbeat_at},
          {"error", t.error},
          {"worker", t.worker},
          {"environment", t.environment ? t.environment->to_json() : nlohmann::json()}};
}

std::optional<Trial> load_trial(ResultsDb& db, int64_t id) {
  SQLite::Statement q(db.sql(), std::string(kSelectTrial) + " WHERE t.id = ?");
  q.bind(1, id);
  if (!q.executeStep()) return std::nullopt;
  return read_trial(q);
}

std::vector<Trial> list_trials(ResultsDb& db, const std::string& study) {
  SQLite::Statement q(db.sql(), std::string(kSelectTrial) +
                                    " WHERE ? = '' OR s.name = ? ORDER BY s.id, t.number, t.id");
  q.bind(1, study);
  q.bind(2, study);
  std::vector<Trial> out;
  while (q.executeStep()) out.push_back(read_trial(q));
  return out;
}

}  // namespace comera::store
