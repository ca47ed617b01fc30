// `comera runs list` and `comera runs show`: trials of the results database (sweep trials and
// plain `comera train` runs, which live in the "runs" study).
#include "core/util/error.h"
#include "core/util/format.h"
#include "search/cli/command.h"
#include "search/cli/db_option.h"
#include "search/runs/trial_recorder.h"
#include "search/store/decisions.h"
#include "search/store/epoch_metrics.h"
#include "search/store/flat_table.h"
#include "search/store/studies.h"
#include "search/store/layer_ranks.h"
#include "search/store/objectives.h"
#include "search/store/results_db.h"
#include "search/store/readable_cell.h"
#include "search/store/stored_real.h"
#include "search/store/trial_listing.h"
#include "search/store/trial_outcome.h"
#include "search/store/trials.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <iostream>
#include <set>

namespace comera::cli {
namespace {

using store::FlatTable;

// A running trial whose heartbeat stopped: its process was killed outright or its host went
// down, and nothing else will tell (a sweep marks it failed only when it next starts).
std::string silence_note(store::ResultsDb& db, const store::Trial& t) {
  const double age = store::heartbeat_age_s(db, t);
  if (!(age > static_cast<double>(kMinStaleAfter.count()))) return "";
  return "no heartbeat for " + format_duration(age) + ": its process may be gone (" +
         (t.study == "runs" ? "train --resume goes on" : "running the sweep again goes on") + ")";
}

int list(int argc, char** argv) {
  auto options = make_options("runs list", "List trials and runs with their state and objectives");
  add_db_option(options);
  options.add_options()("study", "Only this study (plain training runs: 'runs')",
                        cxxopts::value<std::string>()->default_value(""))(
      "json", "Machine-readable output");
  auto parsed = parse(options, argc, argv);
  if (!parsed) return 0;
  auto db = store::ResultsDb::open(db_path(*parsed), store::ResultsDb::Mode::ReadOnly);
  FlatTable table;
  // The text table rounds for reading and shows the headline metrics; --json has them all.
  const std::vector<std::string> shown = {"accuracy", "eval_loss", "size", "compression"};
  table.columns = {"id", "study", "number", "kind", "target", "state", "seed", "epochs"};
  table.columns.insert(table.columns.end(), shown.begin(), shown.end());
  for (const char* c : {"size/S0", "L-L0", "notes", "started_at", "worker"}) table.columns.push_back(c);
  const auto& study = (*parsed)["study"].as<std::string>();
  if (!study.empty()) store::require_study(db, study);
  const auto trials = store::list_trials(db, study);
  if (parsed->count("json")) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& t : trials) rows.push_back(store::trial_row_json(db, t));
    std::cout << rows.dump(2) << std::endl;
    return 0;
  }
  for (const auto& t : trials) {
    const auto values = store::read_objectives(db.sql(), t.id);
    const auto outcome = store::trial_outcome(db, t);
    const nlohmann::json seed = t.seed ? nlohmann::json(*t.seed) : nlohmann::json();
    const int64_t epochs = outcome.epochs;
    std::vector<nlohmann::json> row = {t.id, t.study, t.number, outcome.kind, outcome.target_text(),
                                       store::to_string(t.state), seed, epochs};
    for (const auto& name : shown) {
      const auto it = values.find(name);
      row.push_back(it == values.end() ? "" : store::readable_cell(name, it->second));
    }
    row.push_back(store::readable_cell("size_vs_s0", outcome.size_vs_target));
    row.push_back(store::readable_cell("loss_vs_l0", outcome.loss_vs_target));
    const auto notes = outcome.notes(), silent = silence_note(db, t);
    row.push_back(notes.empty() || silent.empty() ? notes + silent : notes + "; " + silent);
    row.push_back(t.started_at);
    row.push_back(t.worker);
    table.rows.push_back(std::move(row));
  }
  if (trials.empty())
    std::cout << "no trials in " << db.path() << "\n";
  else
    store::write_text(std::cout, table);
  return 0;
}

int show(int argc, char** argv) {
  auto options = make_options("runs show",
                              "One trial: config, environment, decisions (proposed, pruned, "
                              "resumed), metrics per epoch, final objectives, layer ranks");
  add_db_option(options);
  options.add_options()("id", "Trial id in the database (the id column of `comera runs list` and `comera pareto`; "
                              "not the trial's number in its study, which reasons and plots name as #N)",
                        cxxopts::value<int64_t>())("json", "Machine-readable output");
  options.parse_positional({"id"});
  options.positional_help("ID");
  auto parsed = parse(options, argc, argv);
  if (!parsed) return 0;
  if (!parsed->count("id")) throw Error("give a trial id, e.g. comera runs show 3");
  auto db = store::ResultsDb::open(db_path(*parsed), store::ResultsDb::Mode::ReadOnly);
  const int64_t id = (*parsed)["id"].as<int64_t>();
  const auto trial = store::load_trial(db, id);
  if (!trial)
    throw Error("no trial " + std::to_string(id) + " in " + db.path() +
                ": see `comera runs list --db " + db.path() + "`");
  const auto epochs = store::read_epochs(db.sql(), id);
  const auto ranks = store::read_layer_ranks(db.sql(), id);
  const auto values = store::read_objectives(db.sql(), id);
  if (parsed->count("json")) {
    std::cout << store::trial_detail_json(db, *trial).dump(2) << std::endl;
    return 0;
  }
  const auto& t = *trial;
  std::cout << "trial " << t.id << ": study " << t.study << " #" << t.number
            << (t.replica ? " (repeat " + std::to_string(t.replica) + ")" : "") << ", "
            << store::to_string(t.state) << ", " << t.attempts << " attempt(s)\n"
            << "  started " << t.started_at << ", ended " << t.ended_at << ", worker " << t.worker
            << "\n";
  if (const auto silent = silence_note(db, t); !silent.empty()) std::cout << "  " << silent << "\n";
  if (t.environment) std::cout << "  environment " << t.environment->to_json().dump() << "\n";
  if (!t.error.empty())
    std::cout << (t.state == store::TrialState::Failed ? "  error: " : "  ended: ") << t.error << "\n";
  std::cout << "config (" << t.config_hash.substr(0, 12) << "):\n" << t.config.dump(2) << "\n";
  std::cout << "objectives:";
  for (const auto& [name, value] : values)
    std::cout << " " << name << "=" << store::format_real(value);
  std::cout << (values.empty() ? " none yet\n" : "\n");
  const auto decisions = store::read_decisions(db.sql(), id);
  if (!decisions.empty()) {
    std::cout << "decisions:\n";
    for (const auto& d : decisions) std::cout << "  " << d.recorded_at << " " << store::describe(d) << "\n";
  }
  if (!epochs.empty()) {
    std::cout << "epochs:\n";
    store::write_text(std::cout, store::epoch_table(db, epochs));
  }
  if (!ranks.empty()) {
    const auto& [epoch, layers] = *ranks.rbegin();
    std::cout << "ranks at epoch " << epoch << " (" << ranks.size()
              << " epoch(s) recorded; --json shows all):\n";
    FlatTable table;
    table.columns = {"layer", "ranks", "size"};
    for (const auto& layer : layers)
      table.rows.push_back({layer.layer, store::format_ranks(layer.ranks), layer.size});
    store::write_text(std::cout, table);
  }
  return 0;
}

Register reg_list("runs list", "List trials and training runs (--study, --json)", list);
Register reg_show("runs show", "One trial: config, per-epoch metrics, objectives, ranks", show);

}  // namespace
}  // namespace comera::cli
