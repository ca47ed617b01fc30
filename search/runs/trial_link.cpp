#include "search/runs/trial_link.h"

#include "core/util/output_file.h"
#include "search/environment.h"
#include "search/store/trial_queue.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

namespace comera {

namespace {

std::string link_file(const std::string& checkpoint) { return checkpoint + ".trial.json"; }

}  // namespace

std::optional<TrialLink> read_trial_link(const std::string& checkpoint) {
  std::ifstream in(link_file(checkpoint));
  if (!in) return std::nullopt;
  const auto j = nlohmann::json::parse(in, nullptr, false);
  if (!j.is_object() || !j.contains("db") || !j.contains("trial")) return std::nullopt;
  return TrialLink{j["db"].get<std::string>(), j["trial"].get<int64_t>()};
}

void write_trial_link(const std::string& checkpoint, const TrialLink& link) {
  OutputFile(link_file(checkpoint), "--checkpoint", {link.db}).write_text([&](std::ostream& out) {
    out << nlohmann::json{{"db", link.db}, {"trial", link.trial}}.dump();
  });
}

store::Trial link_trial(store::ResultsDb& db, const nlohmann::json& config, const std::string& checkpoint,
                        const std::string& worker, bool resumed, const std::string& device) {
  const auto db_path = std::filesystem::absolute(db.path()).string();
  const auto link = resumed ? read_trial_link(checkpoint) : std::nullopt;
  const auto linked = link && link->db == db_path ? store::load_trial(db, link->trial) : std::nullopt;
  // A run taken further after its trial ended (complete, diverged) is a new trial.
  if (linked && (linked->state == store::TrialState::Running || linked->state == store::TrialState::Failed ||
                 linked->state == store::TrialState::Killed)) {
    store::resume_trial(db, linked->id, worker);
    return *store::load_trial(db, linked->id);
  }
  const auto trial = store::start_run(db, config, worker, current_environment(device));
  write_trial_link(checkpoint, {db_path, trial.id});
  return trial;
}

}  // namespace comera
